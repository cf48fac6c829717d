package versions

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func rollbackFrom(name, v string, uid types.UID) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) {
		o.Spec.RollbackFrom = &operatorsv1alpha1.RollbackSource{Name: name, Version: v, UID: uid}
	}
}

func uid(u types.UID) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) { o.UID = u }
}

// A rollback of etcd.v2.0.0 (uid bad) to etcd.v1.0.0: the rollback replaces the bad version, the bad version does
// not replace the rollback although its replaces names it, and a successor of the bad version replaces the rollback.
func TestReplacesRollback(t *testing.T) {
	bad := ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0"), uid("bad"))
	back := ov("etcd.v1.0.0", "1.0.0", replaces("etcd.v2.0.0"), rollbackFrom("etcd.v2.0.0", "2.0.0", "bad"), uid("back"))
	cases := []struct {
		name         string
		newer, older operatorsv1alpha1.OperatorVersion
		want         bool
	}{
		{"the rollback replaces the version it goes back from", back, bad, true},
		{"the version rolled back from does not replace the rollback", bad, back, false},
		{"the same name created again later (another UID) replaces the rollback",
			ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0"), uid("again")), back, true},
		{"the rollback does not replace a version of the same name with another UID",
			back, ov("etcd.v2.0.0", "2.0.0", uid("again")), false},
		{"a successor of the rolled back version replaces the rollback (replaces)",
			ov("etcd.v2.0.1", "2.0.1", replaces("etcd.v2.0.0")), back, true},
		{"a successor of the rolled back version replaces the rollback (skipRange)",
			ov("etcd.v2.1.0", "2.1.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.SkipRange = ">=2.0.0 <2.1.0" }), back, true},
		{"a version that replaces neither does not", ov("etcd.v3.0.0", "3.0.0", replaces("etcd.v2.5.0")), back, false},
		{"a successor of the rollback itself still does", ov("etcd.v1.1.0", "1.1.0", replaces("etcd.v1.0.0")), back, true},
		{"an older version does not replace the rollback", ov("etcd.v0.9.0", "0.9.0"), back, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Replaces(&tc.newer, &tc.older); got != tc.want {
				t.Fatalf("Replaces(%s, %s) = %v, want %v", tc.newer.Name, tc.older.Name, got, tc.want)
			}
		})
	}
	// With both present, the rollback is the installed version, whatever the versions say.
	all := []operatorsv1alpha1.OperatorVersion{bad, back}
	if got := Installed(all); got == nil || got.UID != "back" {
		t.Fatalf("Installed = %v, want the rollback", got)
	}
	if got := Successors(&all[1], all); len(got) != 0 {
		t.Fatalf("Successors(rollback) = %v, want none: GC must not collect the rollback target", got)
	}
}
