// Package corpus writes synthetic registry+v1 bundle directories shaped like real OperatorHub bundles, for
// benchmarks: a CSV with an icon, a long description, alm-examples, permissions and a deployment; several CRDs with
// large openAPI schemas (about 50-200 KB each, with long descriptions as kubebuilder writes them); a Service, a
// ServiceAccount with the strategy's name and metadata/annotations.yaml.
package corpus

import (
	"encoding/base64"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"sigs.k8s.io/yaml"
)

// Options size the corpus.
type Options struct {
	Packages int // packages
	Versions int // versions per package, each replacing the previous
	CRDs     int // CRDs per bundle
	Seed     int64
}

type obj = map[string]any

// Generate writes Packages x Versions bundle directories under dir as <package>/<version>/ and returns them.
func Generate(dir string, o Options) ([]string, error) {
	r := rand.New(rand.NewSource(o.Seed))
	var dirs []string
	for p := 0; p < o.Packages; p++ {
		pkg := fmt.Sprintf("op-%03d", p)
		for v := 0; v < o.Versions; v++ {
			bdir := filepath.Join(dir, pkg, version(v))
			if err := writeBundle(bdir, pkg, v, o.CRDs, r); err != nil {
				return nil, err
			}
			dirs = append(dirs, bdir)
		}
	}
	return dirs, nil
}

func version(v int) string { return fmt.Sprintf("1.%d.0", v) }

func writeBundle(dir, pkg string, v, crds int, r *rand.Rand) error {
	group := pkg + ".example.com"
	files := map[string]any{}
	var owned []any
	var examples []string
	for c := 0; c < crds; c++ {
		kind := fmt.Sprintf("Kind%d", c)
		plural := strings.ToLower(kind) + "s"
		files[fmt.Sprintf("manifests/%s.%s.crd.yaml", group, plural)] = crd(group, kind, plural, 50_000+r.Intn(150_000), r)
		owned = append(owned, obj{"name": plural + "." + group, "version": "v1", "kind": kind, "displayName": kind, "description": Words(r, 30)})
		examples = append(examples, fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"%s","metadata":{"name":"example"},"spec":{"replicas":1,"config":{"level":"info"}}}`, group, kind))
	}
	files["manifests/"+pkg+".clusterserviceversion.yaml"] = csv(pkg, v, owned, "["+strings.Join(examples, ",")+"]", r)
	files["manifests/"+pkg+"-metrics.service.yaml"] = obj{"apiVersion": "v1", "kind": "Service", "metadata": obj{"name": pkg + "-metrics", "labels": obj{"app": pkg}},
		"spec": obj{"ports": []any{obj{"name": "https", "port": 8443, "targetPort": "https"}}, "selector": obj{"app": pkg}}}
	files["manifests/"+pkg+"-controller.serviceaccount.yaml"] = obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": pkg + "-controller"}}
	files["metadata/annotations.yaml"] = obj{"annotations": obj{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1", "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1": "metadata/", "operators.operatorframework.io.bundle.package.v1": pkg,
		"operators.operatorframework.io.bundle.channels.v1": "stable", "operators.operatorframework.io.bundle.channel.default.v1": "stable"}}
	for name, o := range files {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func csv(pkg string, v int, owned []any, examples string, r *rand.Rand) obj {
	icon := make([]byte, 12_000)
	r.Read(icon)
	name := pkg + ".v" + version(v)
	spec := obj{
		"displayName": strings.ToUpper(pkg[:1]) + pkg[1:] + " Operator", "description": Words(r, 900), "version": version(v),
		"minKubeVersion": "1.25.0", "maturity": "stable", "provider": obj{"name": "Example"}, "keywords": []any{"database", "example"},
		"links":       []any{obj{"name": "Documentation", "url": "https://example.com/" + pkg}},
		"maintainers": []any{obj{"name": "Maintainers", "email": "maintainers@example.com"}},
		"icon":        []any{obj{"base64data": base64.StdEncoding.EncodeToString(icon), "mediatype": "image/png"}},
		"installModes": []any{obj{"type": "OwnNamespace", "supported": true}, obj{"type": "SingleNamespace", "supported": true},
			obj{"type": "MultiNamespace", "supported": false}, obj{"type": "AllNamespaces", "supported": true}},
		"customresourcedefinitions": obj{"owned": owned},
		"relatedImages":             []any{obj{"name": "manager", "image": "example/" + pkg + ":v" + version(v)}},
		"install": obj{"strategy": "deployment", "spec": obj{
			"permissions":        []any{obj{"serviceAccountName": pkg + "-controller", "rules": rules(8)}},
			"clusterPermissions": []any{obj{"serviceAccountName": pkg + "-controller", "rules": rules(12)}},
			"deployments": []any{obj{"name": pkg + "-controller", "spec": obj{
				"replicas": 1, "selector": obj{"matchLabels": obj{"app": pkg}},
				"template": obj{"metadata": obj{"labels": obj{"app": pkg}}, "spec": obj{"serviceAccountName": pkg + "-controller",
					"containers": []any{obj{"name": "manager", "image": "example/" + pkg + ":v" + version(v), "args": []any{"--leader-elect"},
						"resources":      obj{"limits": obj{"cpu": "500m", "memory": "256Mi"}, "requests": obj{"cpu": "10m", "memory": "64Mi"}},
						"readinessProbe": obj{"httpGet": obj{"path": "/readyz", "port": 8081}}}}}}}}},
		}},
	}
	if v > 0 {
		spec["replaces"] = pkg + ".v" + version(v-1)
	}
	return obj{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": obj{"name": name, "annotations": obj{"alm-examples": examples, "capabilities": "Full Lifecycle", "categories": "Database",
			"containerImage": "example/" + pkg + ":v" + version(v), "olm.skipRange": "<" + version(v)}},
		"spec": spec}
}

func rules(n int) []any {
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, obj{"apiGroups": []any{fmt.Sprintf("group%d.example.com", i)}, "resources": []any{"things", "things/status"},
			"verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}})
	}
	return out
}

// crd is a v1 CRD whose schema is about size bytes of YAML: nested properties with long descriptions.
func crd(group, kind, plural string, size int, r *rand.Rand) obj {
	props := obj{}
	budget := size
	for i := 0; budget > 0; i++ {
		inner := obj{}
		for j := 0; j < 8; j++ {
			desc := Words(r, 20+r.Intn(40))
			inner[fmt.Sprintf("field%d", j)] = obj{"type": []string{"string", "integer", "boolean"}[j%3], "description": desc}
			budget -= len(desc) + 60
		}
		props[fmt.Sprintf("section%d", i)] = obj{"type": "object", "description": Words(r, 25), "properties": inner}
	}
	schema := obj{"type": "object", "properties": obj{
		"apiVersion": obj{"type": "string"}, "kind": obj{"type": "string"}, "metadata": obj{"type": "object"},
		"spec":   obj{"type": "object", "description": Words(r, 30), "properties": props},
		"status": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	return obj{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": plural + "." + group, "annotations": obj{"controller-gen.kubebuilder.io/version": "v0.16.0"}},
		"spec": obj{"group": group, "scope": "Namespaced",
			"names":    obj{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
			"versions": []any{obj{"name": "v1", "served": true, "storage": true, "schema": obj{"openAPIV3Schema": schema}, "subresources": obj{"status": obj{}}}}}}
}

var vocabulary = strings.Fields("the operator manages a cluster of replicas and reconciles its configuration with the desired " +
	"state described in the spec field when set to true this enables backups to object storage using credentials from a secret " +
	"in the same namespace defaults are applied by the admission webhook")

// Words is n words of an operator-description vocabulary, chosen by r: text of realistic size and shape.
func Words(r *rand.Rand, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = vocabulary[r.Intn(len(vocabulary))]
	}
	return strings.Join(out, " ")
}

// Channels are a package's stable and fast channels of versions entries named by name(i), as real catalogs shape
// them: a replaces chain, every fifth entry with a skipRange over the previous minor, every fifth+3 entry skipping
// its predecessor; fast holds the last five.
func Channels(pkg string, versions int, name func(i int) string) (declcfg.Channel, declcfg.Channel) {
	stable := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: "stable"}
	fast := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: "fast"}
	for i := 0; i < versions; i++ {
		e := declcfg.ChannelEntry{Name: name(i)}
		if i > 0 {
			e.Replaces = name(i - 1)
		}
		if i%5 == 0 && i > 0 {
			e.SkipRange = fmt.Sprintf(">=1.%d.0 <1.%d.0", i/5-1, i/5)
		}
		if i%5 == 3 {
			e.Replaces, e.Skips = name(i-2), []string{name(i - 1)}
		}
		stable.Entries = append(stable.Entries, e)
		if i >= versions-5 {
			fe := e
			if i == versions-5 {
				fe.Replaces, fe.Skips = "", nil
			}
			fast.Entries = append(fast.Entries, fe)
		}
	}
	return stable, fast
}
