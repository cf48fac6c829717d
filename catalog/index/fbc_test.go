package index

import (
	"strings"
	"testing"

	"github.com/almproject/alm/catalog/fbc"
)

func TestFBCBundleObjects(t *testing.T) {
	cfg := loadEtcdIndex(t)
	rendered, err := cfg.DeclarativeConfig("")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := fbc.Write(rendered, "json", &sb); err != nil {
		t.Fatal(err)
	}
	ix := New(Catalog{Name: "rendered", Contents: fbc.Load(strings.NewReader(sb.String()), "rendered.json")})
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
	c, err := fbc.LoadDir("../testdata/etcd")
	if err != nil {
		t.Fatal(err)
	}
	return New(Catalog{Name: "etcd", Contents: c})
}
