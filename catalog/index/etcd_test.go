package index

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/fbc"
)

// The etcd operator 0.9.2 and 0.9.4 bundles from the operator-framework/api module's testdata (Apache-2.0):
// v1beta1 CRDs with preserveUnknownFields, which ALM converts to v1.
func TestEtcdBundles(t *testing.T) {
	c, err := fbc.LoadDir("../testdata/etcd")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Problems {
		if p.IsError() {
			t.Errorf("unexpected error: %s", p)
		}
	}
	if len(c.Bundles) != 2 {
		t.Fatalf("want 2 bundles, got %d (problems %v)", len(c.Bundles), c.Problems)
	}
	ix := New(Catalog{Name: "test", Contents: c})
	for _, p := range ix.Problems() {
		if p.IsError() {
			t.Errorf("unexpected index error: %s", p)
		}
	}
	res, err := ix.Resolve(Request{Package: "etcd"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil || res.Chosen.Name != "etcdoperator.v0.9.4" || res.Channel != "singlenamespace-alpha" {
		t.Fatalf("fresh install: got %s", res.Explain())
	}
	res, err = ix.Resolve(Request{Package: "etcd", From: "0.9.2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil || res.Chosen.Name != "etcdoperator.v0.9.4" || len(res.Path) != 2 || res.Path[0] != "etcdoperator.v0.9.2" {
		t.Fatalf("upgrade: got %s %v", res.Explain(), res.Path)
	}
	t.Log(res.Explain())
	ov, err := res.OperatorVersion("ns")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Spec.Replaces != "etcdoperator.v0.9.2" || ov.Spec.Version.String() != "0.9.4" || len(ov.Spec.Install.StrategySpec.DeploymentSpecs) != 1 {
		t.Fatalf("OperatorVersion: %+v", ov.Spec)
	}
	m, _ := res.Chosen.Bundle.Manifests()
	if len(m.CRDs) != 3 {
		t.Fatalf("want 3 CRDs, got %d", len(m.CRDs))
	}
	for _, crd := range m.CRDs {
		s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Spec.PreserveUnknownFields || s == nil || s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields {
			t.Errorf("CRD %s not normalized: %+v", crd.Name, crd.Spec)
		}
	}
	owners := ix.OwnerPackages(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"})
	if len(owners) != 1 || owners[0] != "etcd" {
		t.Fatalf("owners: %v", owners)
	}
	crd, owner, err := ix.CRD(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdBackup"})
	if err != nil || crd.Name != "etcdbackups.etcd.database.coreos.com" || owner.Name != "etcdoperator.v0.9.4" {
		t.Fatalf("CRD: %v %v %v", err, crd, owner)
	}
	if _, _, err := ix.CRD(schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "Y"}); !errors.Is(err, ErrPackageNotFound) {
		t.Fatalf("CRD of an unknown kind: %v", err)
	}
}
