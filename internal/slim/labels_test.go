package slim

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects of one install carry the same labels and hold one map of them; an object with other labels keeps
// them.
func TestMetadataSharesLabelSets(t *testing.T) {
	install := func() map[string]string {
		return map[string]string{"operators.alm.dev/app-type": "p", "operators.alm.dev/owner": "p.v1.0.0", "operators.alm.dev/owner-namespace": "team-a"}
	}
	other := install()
	other["operators.alm.dev/owner"] = "p.v2.0.0"
	want := maps.Clone(other)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team-a", Labels: install()}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team-a", Labels: install()}}
	next := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "team-a", Labels: other}}
	for _, obj := range []metav1.Object{sa, cm, next} {
		Metadata(obj)
	}
	mapOf := func(m map[string]string) uintptr { return uintptr(reflect.ValueOf(m).UnsafePointer()) }
	if mapOf(sa.Labels) != mapOf(cm.Labels) {
		t.Errorf("two objects with the same labels hold two maps of them, want one")
	}
	if !maps.Equal(sa.Labels, install()) || !maps.Equal(next.Labels, want) || mapOf(next.Labels) == mapOf(sa.Labels) {
		t.Errorf("labels changed: %v and %v, want %v and %v", sa.Labels, next.Labels, install(), want)
	}
}
