package ownership

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func ovNamed(name, uid string) *operatorsv1alpha1.OperatorVersion {
	return &operatorsv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + uid)},
		Spec:       operatorsv1alpha1.OperatorVersionSpec{PackageName: "etcd"},
	}
}

func TestAdoptionNeverLeavesAnObjectWithoutOwner(t *testing.T) {
	v1, v2 := ovNamed("etcd.v1", "1"), ovNamed("etcd.v2", "2")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd-operator"}}
	Claim(sa, v1)
	if !IsOwnedBy(sa, v1) || metav1.GetControllerOf(sa).UID != v1.UID {
		t.Fatalf("after Claim: labels %v refs %v", sa.Labels, sa.OwnerReferences)
	}
	// Install of v2 adds it as a second, non-controlling owner; labels stay with v1.
	if !CoOwn(sa, v2) || len(sa.OwnerReferences) != 2 || metav1.GetControllerOf(sa).UID != v1.UID || !IsOwnedBy(sa, v1) {
		t.Fatalf("after CoOwn: labels %v refs %v", sa.Labels, sa.OwnerReferences)
	}
	if CoOwn(sa, v2) {
		t.Fatal("CoOwn twice changed the object again")
	}
	// Adoption: v2 controls, v1 is gone, labels follow.
	HandOver(sa, v2, v1)
	if len(sa.OwnerReferences) != 1 || metav1.GetControllerOf(sa).UID != v2.UID || !IsOwnedBy(sa, v2) {
		t.Fatalf("after HandOver: labels %v refs %v", sa.Labels, sa.OwnerReferences)
	}
}

func TestHandOverKeepsForeignOwners(t *testing.T) {
	v1, v2 := ovNamed("etcd.v1", "1"), ovNamed("etcd.v2", "2")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	Claim(cm, v1)
	cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other"})
	HandOver(cm, v2, v1)
	if len(cm.OwnerReferences) != 2 || metav1.GetControllerOf(cm).UID != v2.UID {
		t.Fatalf("refs after HandOver = %v", cm.OwnerReferences)
	}
}

// TestHandOverFromAChain: v2 failed while co-owning v1's object; v3 replaces both and takes the object from both, so
// no reference to a version about to be collected is left for Kubernetes' garbage collector to clean up later.
func TestHandOverFromAChain(t *testing.T) {
	v1, v2, v3 := ovNamed("etcd.v1", "1"), ovNamed("etcd.v2", "2"), ovNamed("etcd.v3", "3")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	Claim(cm, v1)
	CoOwn(cm, v2)
	HandOver(cm, v3, v1, v2)
	if len(cm.OwnerReferences) != 1 || metav1.GetControllerOf(cm).UID != v3.UID || !IsOwnedBy(cm, v3) {
		t.Fatalf("after HandOver from v1 and v2: labels %v refs %v", cm.Labels, cm.OwnerReferences)
	}
}

func TestClusterScopedObjectsCarryLabelsOnly(t *testing.T) {
	v1 := ovNamed("etcd.v1", "1")
	cr := &metav1.ObjectMeta{Name: "alm:ns:etcd.v1:sa"}
	Claim(cr, v1)
	if len(cr.OwnerReferences) != 0 || !IsOwnedBy(cr, v1) {
		t.Fatalf("cluster-scoped: refs %v labels %v", cr.OwnerReferences, cr.Labels)
	}
	Release(cr, v1)
	if IsOwnedBy(cr, v1) || cr.Labels[operatorsv1alpha1.LabelAppType] != "etcd" {
		t.Fatalf("after Release: labels %v, want the package label only", cr.Labels)
	}
}

func TestLabelValue(t *testing.T) {
	for _, s := range []string{"etcdoperator.v0.9.4", strings.Repeat("a", 63), strings.Repeat("long-name.", 10), "weird/name with spaces"} {
		v := LabelValue(s)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q is not a valid label value: %v", s, v, errs)
		}
		if len(s) <= 63 && !strings.Contains(s, " ") && v != s {
			t.Errorf("LabelValue(%q) = %q, want it unchanged", s, v)
		}
	}
	if LabelValue(strings.Repeat("a", 70)) == LabelValue(strings.Repeat("a", 71)) {
		t.Error("two long names map to the same label value")
	}
}
