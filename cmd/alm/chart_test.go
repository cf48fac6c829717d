package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/almproject/alm/test/helm"
)

// TestChartFlagsParse: the flags the Helm chart (charts/alm) passes with every value of its set are flags alm
// accepts, and they mean what the values say.
func TestChartFlagsParse(t *testing.T) {
	objs := helm.Template(t, "../../charts/alm", "alm", "alm-system",
		"--set", "loops=catalog,leaderElection.enabled=false,leaderElection.id=alm-catalog,leaderElection.namespace=kube-system",
		"--set", "trust.allNamespaces=true,catalog.directoryRoot=/catalogs,catalog.resync=1m,catalog.scratchBytes=3Gi",
		"--set", "bundleCache.bytes=2Gi,bundleCache.size=128,installTimeout=10m,maxConcurrentReconciles=8",
		"--set", "kubeAPI.qps=50,kubeAPI.burst=100,metrics.port=9443,metrics.secure=false,healthProbe.port=9081")
	d := helm.Find(objs, "Deployment", "alm-manager")
	if d == nil {
		t.Fatal("the chart renders no Deployment alm-manager")
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var args []string
	for _, a := range containers[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	o, _, err := parseFlags(args)
	if err != nil {
		t.Fatalf("alm refuses the chart's args %v: %v", args, err)
	}
	got := map[string]any{
		"loops": o.loops, "leaderElect": o.leaderElect, "leaderElectionID": o.leaderElectionID,
		"leaderElectionNamespace": o.leaderElectionNamespace, "trustAll": o.loopOptions.TrustAllNamespaces,
		"root": o.loopOptions.DirectoryCatalogRoot, "resync": o.loopOptions.CatalogResync,
		"scratch": o.catalogScratchBytes.Value(), "cacheBytes": o.bundleCacheBytes.Value(), "cacheSize": o.bundleCacheSize,
		"installTimeout": o.loopOptions.InstallTimeout, "workers": o.maxConcurrentReconciles, "qps": o.qps, "burst": o.burst,
		"metrics": o.metrics.BindAddress, "secure": o.metrics.Secure, "probes": o.probeAddr,
	}
	want := map[string]any{
		"loops": "catalog", "leaderElect": false, "leaderElectionID": "alm-catalog",
		"leaderElectionNamespace": "kube-system", "trustAll": true,
		"root": "/catalogs", "resync": time.Minute,
		"scratch": int64(3 << 30), "cacheBytes": int64(2 << 30), "cacheSize": 128,
		"installTimeout": 10 * time.Minute, "workers": 8, "qps": 50.0, "burst": 100,
		"metrics": ":9443", "secure": false, "probes": ":9081",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: alm parsed %v (%T) from the chart's args, want %v", k, got[k], got[k], w)
		}
	}
}
