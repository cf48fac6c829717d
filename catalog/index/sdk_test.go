package index

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOperatorSDKBundles loads bundles laid out as operator-sdk writes them (bundle.Dockerfile, manifests/,
// metadata/annotations.yaml with metrics and scorecard annotations, tests/scorecard/): no problems, the Service and
// ClusterRole are kept for the Install loop, and the scorecard configuration is not part of the bundle.
func TestOperatorSDKBundles(t *testing.T) {
	ix := New(Catalog{Name: "sdk", Contents: mustLoadDir(t, "../testdata/sdk")})
	if len(ix.Problems()) != 0 {
		t.Fatalf("problems: %v", ix.Problems())
	}
	res, err := ix.Resolve(Request{Package: "memcached-operator", From: "0.0.2"})
	if err != nil || res.Chosen == nil || res.Chosen.Name != "memcached-operator.v0.1.0" {
		t.Fatalf("%v\n%s", err, res.Explain())
	}
	m, err := res.Chosen.Bundle.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range m.Objects {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	if len(kinds) != 2 || kinds[0] != "Service/memcached-operator-controller-manager-metrics-service" || kinds[1] != "ClusterRole/memcached-operator-metrics-reader" {
		t.Errorf("objects %v", kinds)
	}
	ov, err := res.OperatorVersion("ns")
	if err != nil || ov.Spec.SkipRange != ">=0.0.1 <0.1.0" || ov.Spec.Replaces != "memcached-operator.v0.0.2" || len(ov.Spec.Install.StrategySpec.ClusterPermissions) != 1 {
		t.Errorf("OperatorVersion %v %+v", err, ov)
	}
	var objs []string
	for _, raw := range ov.Spec.Objects {
		u := map[string]any{}
		if err := json.Unmarshal(raw.Raw, &u); err != nil {
			t.Fatal(err)
		}
		if _, ok := u["status"]; ok {
			t.Errorf("object with status: %s", raw.Raw)
		}
		objs = append(objs, u["kind"].(string))
	}
	if strings.Join(objs, ",") != "CustomResourceDefinition,Service,ClusterRole" {
		t.Errorf("spec.objects: %v", objs)
	}
}
