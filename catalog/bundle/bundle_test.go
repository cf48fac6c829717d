package bundle

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/almproject/alm/catalog/internal/cattest"
)

// TestLoadBundleWarnings: what a bundle may carry that ALM reports but still installs.
func TestLoadBundleWarnings(t *testing.T) {
	tests := []struct {
		name    string
		file    string // added under manifests/
		content string
		rule    string
		objects int // Manifests.Objects after loading
	}{
		{name: "unsupported kind", file: "deployment.yaml", rule: RuleUnsupportedObject, objects: 0,
			content: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: extra\nspec: {}\n"},
		{name: "supported kind", file: "service.yaml", objects: 1,
			content: "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n"},
		{name: "two documents in one file", file: "pdb.yaml", rule: RuleIgnoredDocument, objects: 1,
			content: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"},
		{name: "v1 CRD with preserveUnknownFields", file: "widgets.crd.yaml", rule: RuleNormalized,
			content: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.good.example.com
spec:
  group: good.example.com
  preserveUnknownFields: true
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := cattest.CopyDir(t, "../testdata/bad/install-strategy/good/1.0.0")
			cattest.WriteFile(t, filepath.Join(dir, "manifests", tt.file), tt.content)
			b, problems := Load(dir)
			if b == nil {
				t.Fatalf("bundle excluded: %v", problems)
			}
			if HasErrors(problems) {
				t.Fatalf("errors: %v", problems)
			}
			found := tt.rule == ""
			for _, p := range problems {
				if p.Rule == tt.rule && p.Severity == SeverityWarning && strings.HasSuffix(p.Path, tt.file) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s warning on %s: %v", tt.rule, tt.file, problems)
			}
			m, _ := b.Manifests()
			if len(m.Objects) != tt.objects {
				t.Errorf("%d objects, want %d", len(m.Objects), tt.objects)
			}
			if tt.rule == RuleNormalized {
				s := m.CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema
				if m.CRDs[0].Spec.PreserveUnknownFields || s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields {
					t.Errorf("CRD not normalized: %+v", m.CRDs[0].Spec)
				}
			}
		})
	}
}

// TestCRDVerdictCache: the same refused CRD in two bundles is reported at each bundle's own file.
func TestCRDVerdictCache(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"a", "b"} {
		cattest.CopyTree(t, "../testdata/realworld/v1-k8s-io-unapproved", filepath.Join(dir, v))
	}
	for _, v := range []string{"a", "b"} {
		_, problems := Load(filepath.Join(dir, v))
		found := false
		for _, p := range problems {
			found = found || (p.Rule == RuleCRDAPIApproval && strings.HasPrefix(p.Path, filepath.Join(dir, v, "manifests")+"/"))
		}
		if !found {
			t.Errorf("bundle %s: no %s problem in its own manifests/: %v", v, RuleCRDAPIApproval, problems)
		}
	}
}

// TestValidateCRDLeavesTheCRDAlone: validation defaults a copy; the CRD the bundle keeps is not changed (every CRD of
// testdata/realworld, conversion webhooks included).
func TestValidateCRDLeavesTheCRDAlone(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/realworld/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		src, problems := readBundle(dir, dir)
		if HasErrors(problems) {
			continue
		}
		pb, _ := parseBundle(src)
		for _, crd := range pb.crds {
			before := crd.DeepCopy()
			validateCRD(crd, "")
			if !equality.Semantic.DeepEqual(before, crd) {
				t.Errorf("%s: validateCRD changed CRD %s", dir, crd.Name)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d CRDs checked", n)
	}
}
