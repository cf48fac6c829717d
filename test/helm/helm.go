// Package helm runs the pinned helm binary (built into bin/helm from hack/tools/helm) and kubectl's kustomize in
// tests, and reads what they render as objects, so that charts/alm is checked by Helm itself against config/.
//
// Every run gets fresh Helm cache, config and data directories in the test's temporary directory: a run never reads
// the user's repositories, plugins or registry credentials, and never contacts a cluster (helm template and lint do
// not).
package helm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/localkube"
)

// Tool returns the binary name in $ALM_BIN_DIR, else <repo>/bin, failing the test when it is missing: the chart is
// never left untested.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir, err := localkube.BinDir()
	if err != nil {
		t.Fatalf("finding %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		t.Fatalf("%s not found at %s: run make tools (it builds bin/%s from hack/tools), or set ALM_BIN_DIR", name, p, name)
	}
	return p
}

// Run runs helm with args and returns its standard output; a failure's error carries its standard error.
func Run(t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin := Tool(t, "helm")
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"), "KUBECONFIG=" + filepath.Join(home, "no-kubeconfig"),
	}
	return run(cmd, "helm", args)
}

// Kustomize returns `kubectl kustomize dir` (bin/kubectl, built from the pinned Kubernetes source).
func Kustomize(t testing.TB, dir string) (string, error) {
	t.Helper()
	return run(exec.CommandContext(t.Context(), Tool(t, "kubectl"), "kustomize", dir), "kubectl", []string{"kustomize", dir})
}

func run(cmd *exec.Cmd, name string, args []string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Template renders chart as release name in namespace with args (e.g. --set a=b) and returns its objects.
func Template(t testing.TB, chart, name, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := Run(t, append([]string{"template", name, chart, "--namespace", namespace}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Objects(out)
	if err != nil {
		t.Fatalf("helm template %s: %v", chart, err)
	}
	return objs
}

// Objects reads the objects of a multi-document YAML stream, skipping empty documents.
func Objects(stream string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split("\n"+stream, "\n---") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("%w in:\n%.300s", err, doc)
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}

// Key names an object: its group, kind, namespace and name.
func Key(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return fmt.Sprintf("%s/%s %s/%s", gvk.Group, gvk.Kind, o.GetNamespace(), o.GetName())
}

// Find returns the object of kind and name among objs, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}
