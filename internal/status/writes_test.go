package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestWritesStale(t *testing.T) {
	at := func(rv string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", ResourceVersion: rv}}
	}
	var w Writes
	if w.Stale(at("1")) {
		t.Fatal("nothing written: no copy is stale")
	}
	w.Wrote(at("3"), "1") // a finalizer write replaced version 1 ...
	w.Wrote(at("4"), "3") // ... then a status write replaced version 3
	for _, rv := range []string{"1", "3"} {
		if !w.Stale(at(rv)) {
			t.Errorf("version %s, which our own writes replaced, is not stale", rv)
		}
	}
	if w.Stale(at("4")) {
		t.Error("version 4, the result of our last write, is stale")
	}
	if w.Stale(at("1")) {
		t.Error("once the cache showed a newer version, what was recorded must be forgotten")
	}
	w.Wrote(at("6"), "5")
	w.Forget(client.ObjectKey{Namespace: "ns", Name: "x"})
	if w.Stale(at("5")) {
		t.Error("Forget did not drop the record")
	}
}
