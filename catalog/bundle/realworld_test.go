package bundle

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/catalog/internal/cattest"
)

var updateRealWorld = flag.Bool("update-realworld", false, "regenerate catalog/testdata/realworld")

type obj = map[string]any

// rwBundle is a bundle in the shape real OperatorHub bundles have: a CSV with a deployment, permissions, an owned
// CRD and alm-examples, plus what each case changes.
type rwBundle struct {
	csv   obj
	files map[string]obj // manifests/<file> -> object
}

func rwCRD(group, kind, apiVersion string) obj {
	plural := strings.ToLower(kind) + "s"
	spec := obj{"group": group, "scope": "Namespaced", "names": obj{"kind": kind, "plural": plural, "listKind": kind + "List", "singular": strings.ToLower(kind)}}
	schema := obj{"openAPIV3Schema": obj{"type": "object", "properties": obj{"spec": obj{"type": "object", "properties": obj{"size": obj{"type": "integer"}}}}}}
	if apiVersion == "apiextensions.k8s.io/v1beta1" {
		spec["version"] = "v1"
		spec["versions"] = []any{obj{"name": "v1", "served": true, "storage": true}}
		spec["validation"] = schema
	} else {
		spec["versions"] = []any{obj{"name": "v1", "served": true, "storage": true, "schema": schema}}
	}
	return obj{"apiVersion": apiVersion, "kind": "CustomResourceDefinition", "metadata": obj{"name": plural + "." + group}, "spec": spec}
}

func newRWBundle() *rwBundle {
	container := obj{"name": "manager", "image": "example/rw-operator:v1.0.0", "command": []any{"/manager"}}
	csv := obj{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": obj{"name": "rw.v1.0.0", "annotations": obj{
			"alm-examples": `[{"apiVersion":"rw.example.com/v1","kind":"Widget","metadata":{"name":"example"},"spec":{"size":1}}]`,
			"capabilities": "Basic Install"}},
		"spec": obj{
			"displayName": "Real-world operator", "description": "An operator shaped like the ones on OperatorHub.",
			"version": "1.0.0", "minKubeVersion": "1.25.0", "maturity": "stable", "provider": obj{"name": "Example"},
			"installModes":              []any{obj{"type": "OwnNamespace", "supported": true}, obj{"type": "AllNamespaces", "supported": true}},
			"customresourcedefinitions": obj{"owned": []any{obj{"name": "widgets.rw.example.com", "version": "v1", "kind": "Widget", "displayName": "Widget", "description": "A widget"}}},
			"install": obj{"strategy": "deployment", "spec": obj{
				"permissions": []any{obj{"serviceAccountName": "rw-operator", "rules": []any{obj{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch"}}}}},
				"deployments": []any{obj{"name": "rw-operator", "spec": obj{
					"selector": obj{"matchLabels": obj{"app": "rw"}},
					"template": obj{"metadata": obj{"labels": obj{"app": "rw"}}, "spec": obj{"serviceAccountName": "rw-operator", "containers": []any{container}}}}}},
			}},
		},
	}
	return &rwBundle{csv: csv, files: map[string]obj{"widgets.crd.yaml": rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1")}}
}

func (b *rwBundle) spec() obj { return b.csv["spec"].(obj) }
func (b *rwBundle) annotations() obj {
	return b.csv["metadata"].(obj)["annotations"].(obj)
}
func (b *rwBundle) installSpec() obj { return b.spec()["install"].(obj)["spec"].(obj) }

// write writes the bundle as <dir>/manifests and <dir>/metadata/annotations.yaml.
func (b *rwBundle) write(t *testing.T, dir string) {
	t.Helper()
	files := map[string]obj{"manifests/rw.clusterserviceversion.yaml": b.csv, "metadata/annotations.yaml": {"annotations": obj{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1", "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1": "metadata/", "operators.operatorframework.io.bundle.package.v1": "rw",
		"operators.operatorframework.io.bundle.channels.v1": "stable", "operators.operatorframework.io.bundle.channel.default.v1": "stable"}}}
	for name, o := range b.files {
		files["manifests/"+name] = o
	}
	for name, o := range files {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rwCase is one shape found in public bundles and what a user sees for it.
type rwCase struct {
	name     string
	mutate   func(b *rwBundle)
	accepted bool
	rule     string // a problem with this rule ...
	severity Severity
	file     string // ... in this file of the bundle ("" for none expected)
}

var rwCases = []rwCase{
	{"plain", func(*rwBundle) {}, true, "", "", ""},
	{"sa-duplicate", func(b *rwBundle) {
		b.files["rw-operator.sa.yaml"] = obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "rw-operator", "labels": obj{"team": "rw"}}, "imagePullSecrets": []any{obj{"name": "pull"}}}
	}, true, RuleServiceAccountMerged, SeverityWarning, "manifests/rw-operator.sa.yaml"},
	{"sa-other-name", func(b *rwBundle) {
		b.files["metrics.sa.yaml"] = obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "rw-metrics"}}
	}, true, "", "", ""},
	{"extra-crd", func(b *rwBundle) {
		b.files["gadgets.crd.yaml"] = rwCRD("rw.example.com", "Gadget", "apiextensions.k8s.io/v1")
	},
		true, RuleCRDNotOwned, SeverityWarning, "manifests/gadgets.crd.yaml"},
	{"alm-examples-unowned-kind", func(b *rwBundle) {
		b.annotations()["alm-examples"] = `[{"apiVersion":"rw.example.com/v1","kind":"Gizmo","metadata":{"name":"x"}}]`
	}, true, RuleALMExamples, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"alm-examples-not-json", func(b *rwBundle) { b.annotations()["alm-examples"] = `[{"apiVersion": ` },
		true, RuleALMExamples, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"alm-examples-missing", func(b *rwBundle) { delete(b.annotations(), "alm-examples") },
		true, RuleALMExamples, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"no-min-kube-version", func(b *rwBundle) { delete(b.spec(), "minKubeVersion") },
		true, RuleMinKubeVersion, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"no-install-modes", func(b *rwBundle) { delete(b.spec(), "installModes") }, true, "", "", ""},
	{"no-display-name", func(b *rwBundle) { delete(b.spec(), "displayName") },
		true, RuleCSVFieldMissing, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"v1beta1-crd", func(b *rwBundle) {
		b.files["widgets.crd.yaml"] = rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1beta1")
	},
		true, RuleNormalized, SeverityWarning, "manifests/widgets.crd.yaml"},
	{"v1beta1-preserve-unknown-fields", func(b *rwBundle) {
		crd := rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1beta1")
		crd["spec"].(obj)["preserveUnknownFields"] = true
		b.files["widgets.crd.yaml"] = crd
	}, true, RuleNormalized, SeverityWarning, "manifests/widgets.crd.yaml"},
	{"v1beta1-k8s-io-unapproved", func(b *rwBundle) { rwMoveGroup(b, "rw.storage.k8s.io", "apiextensions.k8s.io/v1beta1", "") },
		false, RuleCRDAPIApproval, SeverityError, "manifests/widgets.crd.yaml"},
	{"v1beta1-k8s-io-approved", func(b *rwBundle) {
		rwMoveGroup(b, "rw.storage.k8s.io", "apiextensions.k8s.io/v1beta1", "https://github.com/kubernetes/enhancements/pull/1111")
	}, true, RuleNormalized, SeverityWarning, "manifests/widgets.crd.yaml"},
	{"v1-k8s-io-unapproved", func(b *rwBundle) { rwMoveGroup(b, "rw.sigs.k8s.io", "apiextensions.k8s.io/v1", "") },
		false, RuleCRDAPIApproval, SeverityError, "manifests/widgets.crd.yaml"},
	{"v1beta1-non-structural-schema", func(b *rwBundle) {
		crd := rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1beta1")
		crd["spec"].(obj)["validation"] = obj{"openAPIV3Schema": obj{"properties": obj{"spec": obj{"properties": obj{"size": obj{}}}}}}
		b.files["widgets.crd.yaml"] = crd
	}, false, RuleInvalidCRD, SeverityError, "manifests/widgets.crd.yaml"},
	{"conversion-webhook", func(b *rwBundle) {
		crd := rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1")
		crd["spec"].(obj)["conversion"] = obj{"strategy": "Webhook", "webhook": obj{"conversionReviewVersions": []any{"v1"},
			"clientConfig": obj{"service": obj{"name": "rw-webhook", "namespace": "system", "path": "/convert"}}}}
		b.files["widgets.crd.yaml"] = crd
		b.spec()["webhookdefinitions"] = []any{obj{"type": "ConversionWebhook", "generateName": "cwidgets.rw.example.com", "admissionReviewVersions": []any{"v1"},
			"sideEffects": "None", "deploymentName": "rw-operator", "containerPort": 443, "conversionCRDs": []any{"widgets.rw.example.com"}, "webhookPath": "/convert"}}
	}, true, "", "", ""},
	{"conversion-webhook-without-config", func(b *rwBundle) {
		crd := rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1")
		crd["spec"].(obj)["conversion"] = obj{"strategy": "Webhook"}
		b.files["widgets.crd.yaml"] = crd
	}, false, RuleInvalidCRD, SeverityError, "manifests/widgets.crd.yaml"},
	{"validating-webhook", func(b *rwBundle) {
		b.spec()["webhookdefinitions"] = []any{obj{"type": "ValidatingAdmissionWebhook", "generateName": "vwidget.rw.example.com", "admissionReviewVersions": []any{"v1"},
			"sideEffects": "None", "deploymentName": "rw-operator", "containerPort": 443, "webhookPath": "/validate"}}
	}, true, "", "", ""},
	{"webhook-unknown-deployment", func(b *rwBundle) {
		b.spec()["webhookdefinitions"] = []any{obj{"type": "ValidatingAdmissionWebhook", "generateName": "vwidget.rw.example.com", "admissionReviewVersions": []any{"v1"},
			"sideEffects": "None", "deploymentName": "nope", "containerPort": 443, "webhookPath": "/validate"}}
	}, false, RuleInvalidWebhook, SeverityError, "manifests/rw.clusterserviceversion.yaml"},
	{"webhook-every-resource-fail", func(b *rwBundle) {
		b.spec()["webhookdefinitions"] = []any{obj{"type": "ValidatingAdmissionWebhook", "generateName": "vall.rw.example.com", "admissionReviewVersions": []any{"v1"},
			"sideEffects": "None", "deploymentName": "rw-operator", "containerPort": 443, "webhookPath": "/validate",
			"rules": []any{obj{"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "resources": []any{"*"}, "operations": []any{"*"}}}}}
	}, true, "wildcard-webhook", SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"related-images", func(b *rwBundle) {
		b.spec()["relatedImages"] = []any{obj{"name": "manager", "image": "example/rw-operator:v1.0.0"}}
	}, true, "", "", ""},
	{"related-images-invalid", func(b *rwBundle) {
		b.spec()["relatedImages"] = []any{obj{"name": "manager", "image": "Not A Pullspec"}}
	},
		true, RuleRelatedImages, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"multiple-deployments", func(b *rwBundle) {
		deps := b.installSpec()["deployments"].([]any)
		second := obj{"name": "rw-webhook", "spec": obj{"selector": obj{"matchLabels": obj{"app": "rw-webhook"}},
			"template": obj{"metadata": obj{"labels": obj{"app": "rw-webhook"}}, "spec": obj{"serviceAccountName": "rw-operator",
				"containers": []any{obj{"name": "webhook", "image": "example/rw-webhook:v1.0.0"}}}}}}
		b.installSpec()["deployments"] = append(deps, second)
	}, true, "", "", ""},
	{"cluster-permissions-and-objects", func(b *rwBundle) {
		b.installSpec()["clusterPermissions"] = []any{obj{"serviceAccountName": "rw-operator", "rules": []any{obj{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "verbs": []any{"get"}}}}}
		b.files["metrics.service.yaml"] = obj{"apiVersion": "v1", "kind": "Service", "metadata": obj{"name": "rw-metrics"}, "spec": obj{"ports": []any{obj{"port": 8443}}}}
		b.files["rw.pdb.yaml"] = obj{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": obj{"name": "rw"}, "spec": obj{"minAvailable": 1}}
		b.files["rw.servicemonitor.yaml"] = obj{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": obj{"name": "rw"}, "spec": obj{}}
	}, true, "", "", ""},
	{"unsupported-object", func(b *rwBundle) {
		b.files["sample.yaml"] = obj{"apiVersion": "console.openshift.io/v1", "kind": "ConsoleYAMLSample", "metadata": obj{"name": "rw-sample"}, "spec": obj{}}
	}, true, RuleUnsupportedObject, SeverityWarning, "manifests/sample.yaml"},
	{"annotation-wrong-case", func(b *rwBundle) { b.annotations()["olm.SkipRange"] = "<1.0.0" },
		true, RuleAnnotationCase, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"replaces-invalid-name", func(b *rwBundle) { b.spec()["replaces"] = "RW_v0.9" },
		true, RuleInvalidReplacesName, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"release-name-mismatch", func(b *rwBundle) { b.spec()["release"] = "2" },
		true, RuleBundleName, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"properties-annotation", func(b *rwBundle) { b.annotations()["olm.properties"] = `[]` },
		true, RulePropertiesAnnotation, SeverityWarning, "manifests/rw.clusterserviceversion.yaml"},
	{"csv-name-invalid", func(b *rwBundle) { b.csv["metadata"].(obj)["name"] = "RW_Operator.v1.0.0" },
		false, RuleInvalidCSVName, SeverityError, "manifests/rw.clusterserviceversion.yaml"},
	{"owned-crd-missing", func(b *rwBundle) { delete(b.files, "widgets.crd.yaml") },
		false, RuleOwnedCRDMissing, SeverityError, "manifests/rw.clusterserviceversion.yaml"},
	{"duplicate-crd", func(b *rwBundle) {
		b.files["widgets-v1beta1.crd.yaml"] = rwCRD("rw.example.com", "Widget", "apiextensions.k8s.io/v1beta1")
	},
		false, RuleDuplicateCRD, SeverityError, "manifests/widgets"},
	{"no-deployments", func(b *rwBundle) { b.installSpec()["deployments"] = []any{} },
		false, RuleInstallStrategy, SeverityError, "manifests/rw.clusterserviceversion.yaml"},
}

// rwMoveGroup moves the owned CRD to another group (and apiVersion), with an api-approved annotation when given.
func rwMoveGroup(b *rwBundle, group, apiVersion, approval string) {
	crd := rwCRD(group, "Widget", apiVersion)
	if approval != "" {
		crd["metadata"].(obj)["annotations"] = obj{"api-approved.kubernetes.io": approval}
	}
	b.files["widgets.crd.yaml"] = crd
	owned := b.spec()["customresourcedefinitions"].(obj)["owned"].([]any)
	owned[0].(obj)["name"] = "widgets." + group
	b.annotations()["alm-examples"] = strings.ReplaceAll(b.annotations()["alm-examples"].(string), "rw.example.com", group)
}

const realWorldDir = "../testdata/realworld"

// TestRealWorldShapes loads each bundle of testdata/realworld (shapes found in public OperatorHub bundles) and checks
// what a user sees: accepted or refused, the rule and the file. Regenerate with -update-realworld.
func TestRealWorldShapes(t *testing.T) {
	if *updateRealWorld {
		_ = os.RemoveAll(realWorldDir)
		for _, c := range rwCases {
			b := newRWBundle()
			c.mutate(b)
			b.write(t, filepath.Join(realWorldDir, c.name))
		}
	}
	for _, c := range rwCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(realWorldDir, c.name)
			b, problems := Load(dir)
			if (b != nil) != c.accepted {
				t.Fatalf("accepted = %v, want %v; problems:\n%s", b != nil, c.accepted, cattest.ProblemLines(problems))
			}
			if c.accepted && HasErrors(problems) {
				t.Errorf("accepted bundle has errors:\n%s", cattest.ProblemLines(problems))
			}
			if c.rule == "" {
				for _, p := range problems {
					if p.Rule != RuleMinKubeVersion && p.Rule != RuleNormalized {
						t.Errorf("unexpected problem: %s", p)
					}
				}
				return
			}
			for _, p := range problems {
				if p.Rule == c.rule && p.Severity == c.severity && strings.HasPrefix(p.Path, filepath.Join(dir, c.file)) {
					return
				}
			}
			t.Errorf("no %s %s in %s; problems:\n%s", c.severity, c.rule, c.file, cattest.ProblemLines(problems))
		})
	}
}

// TestEveryClassificationIsTested: each row of the classification table (catalog/README.md) has a real-world case
// that produces it, and ignored rows have a case that shows nothing.
func TestEveryClassificationIsTested(t *testing.T) {
	tested := map[string]Severity{}
	for _, c := range rwCases {
		tested[c.rule] = c.severity
	}
	for _, c := range OLMClassifications() {
		if c.Severity == severityIgnored {
			continue
		}
		if sev, ok := tested[c.Rule]; !ok || sev != c.Severity {
			t.Errorf("classification %s (%s) has no case in rwCases", c.Rule, c.Severity)
		}
	}
	for _, rule := range []string{RuleCRDAPIApproval, RuleInvalidCRD, RuleInvalidWebhook, RuleUnsupportedObject, RuleNormalized, RuleInstallStrategy} {
		if _, ok := tested[rule]; !ok {
			t.Errorf("rule %s has no case in rwCases", rule)
		}
	}
}
