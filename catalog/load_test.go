package catalog

import (
	"strings"
	"testing"

	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLoadFBC(t *testing.T) {
	obj := `{"type":"olm.bundle.object","value":{"data":"eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiU2VydmljZSIsIm1ldGFkYXRhIjp7Im5hbWUiOiJzdmMifX0="}}`
	tests := []struct {
		name     string
		in       string
		packages int
		channels int
		bundles  int
		rule     string // expected problem rule, "" for none
	}{
		{name: "json stream", in: `{"schema":"olm.package","name":"p","defaultChannel":"s"}
{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"p.v1.0.0"}]}` + "\n" + bundleDoc("p", "1.0.0"),
			packages: 1, channels: 1, bundles: 1},
		{name: "yaml documents", in: "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\npackage: p\nname: s\nentries:\n- name: p.v1.0.0\n  skipRange: '<1.0.0'\n---\n" +
			"schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: example.com/p:1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n",
			packages: 1, channels: 1, bundles: 1},
		{name: "other schemas are skipped", in: `{"schema":"olm.deprecations","package":"p","entries":[]}` + "\n" + `{"schema":"custom.thing","name":"x"}`},
		{name: "bundle with objects", in: `{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},` + obj + `]}`, bundles: 1},
		{name: "syntax error keeps earlier documents", in: `{"schema":"olm.package","name":"p","defaultChannel":"s"}` + "\n" + `{"schema": "olm.channel", "name": `, packages: 1, rule: RuleMalformedFBC},
		{name: "bundle without version", in: `{"schema":"olm.bundle","name":"p.v1","package":"p","properties":[]}`, rule: RuleInvalidSemver},
		{name: "bundle with bad version", in: strings.Replace(bundleDoc("p", "1.0.0"), `"version":"1.0.0"`, `"version":"v1"`, 1), rule: RuleInvalidSemver},
		{name: "bundle without package", in: `{"schema":"olm.bundle","name":"x","properties":[]}`, rule: RuleMalformedFBC},
		{name: "package without name", in: `{"schema":"olm.package"}`, rule: RuleMalformedFBC},
		{name: "channel without package", in: `{"schema":"olm.channel","name":"s"}`, rule: RuleMalformedFBC},
		{name: "kubernetes object", in: "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n", rule: RuleIgnoredDocument},
		{name: "bad property value", in: `{"schema":"olm.bundle","name":"p.v1","package":"p","properties":[{"type":"olm.gvk","value":"nope"}]}`, rule: RuleMalformedFBC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := LoadFBC(strings.NewReader(tt.in), "f.json")
			if len(c.Packages) != tt.packages || len(c.Channels) != tt.channels || len(c.Bundles) != tt.bundles {
				t.Errorf("got %d packages, %d channels, %d bundles; want %d, %d, %d (%v)", len(c.Packages), len(c.Channels), len(c.Bundles),
					tt.packages, tt.channels, tt.bundles, c.Problems)
			}
			if tt.rule == "" && len(c.Problems) > 0 {
				t.Errorf("unexpected problems %v", c.Problems)
			}
			if tt.rule != "" && (len(c.Problems) != 1 || c.Problems[0].Rule != tt.rule || c.Problems[0].Path != "f.json") {
				t.Errorf("want one %s problem on f.json, got %v", tt.rule, c.Problems)
			}
		})
	}
}

func TestFBCBundleObjects(t *testing.T) {
	cfg := loadEtcdIndex(t)
	rendered, err := cfg.DeclarativeConfig("")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := WriteFBC(rendered, "json", &sb); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(Catalog{Name: "rendered", Contents: LoadFBC(strings.NewReader(sb.String()), "rendered.json")})
	res, err := ix.Resolve(Request{Package: "etcd", From: "0.9.2"})
	if err != nil || res.Chosen == nil {
		t.Fatalf("%v %s", err, res.Explain())
	}
	ov, err := res.OperatorVersion("ns")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Spec.Version.String() != "0.9.4" || ov.Spec.Replaces != "etcdoperator.v0.9.2" || ov.Spec.Channel != "singlenamespace-alpha" ||
		len(ov.Spec.CustomResourceDefinitions.Owned) != 3 || ov.Spec.Install.StrategyName != "deployment" {
		t.Errorf("OperatorVersion from FBC objects: %+v", ov.Spec)
	}
	m, err := res.Chosen.Bundle.Manifests()
	if err != nil || len(m.CRDs) != 3 || m.OwnedCRD("etcd.database.coreos.com", "EtcdCluster") == nil {
		t.Errorf("manifests from FBC objects: %v %v", err, m)
	}
}

func loadEtcdIndex(t *testing.T) *Index {
	t.Helper()
	c, err := LoadDir("testdata/etcd")
	if err != nil {
		t.Fatal(err)
	}
	return NewIndex(Catalog{Name: "etcd", Contents: c})
}

func TestConvertCRD(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		in   apiextv1beta1.CustomResourceDefinition
	}{
		{name: "no schema, preserveUnknownFields defaulted", in: apiextv1beta1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
			Spec: apiextv1beta1.CustomResourceDefinitionSpec{Group: "example.com", Version: "v1",
				Names: apiextv1beta1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things"}}}},
		{name: "top-level schema and preserveUnknownFields", in: apiextv1beta1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
			Spec: apiextv1beta1.CustomResourceDefinitionSpec{Group: "example.com", PreserveUnknownFields: &yes,
				Versions: []apiextv1beta1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v2", Served: true}},
				Names:    apiextv1beta1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things"},
				Validation: &apiextv1beta1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1beta1.JSONSchemaProps{
					Properties: map[string]apiextv1beta1.JSONSchemaProps{"spec": {Type: "object"}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convertCRDToV1(&tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if out.APIVersion != "apiextensions.k8s.io/v1" || out.Spec.PreserveUnknownFields || len(out.Spec.Versions) == 0 {
				t.Fatalf("not v1: %+v", out)
			}
			for _, v := range out.Spec.Versions {
				s := v.Schema.OpenAPIV3Schema
				if s.Type != "object" || s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields {
					t.Errorf("version %s schema root %+v", v.Name, s)
				}
			}
			if out.Spec.Names.ListKind != "ThingList" || out.Spec.Scope != "Namespaced" {
				t.Errorf("defaults not applied: %+v", out.Spec.Names)
			}
		})
	}
}
