package slim

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// decode gives each object its own copy of every string, as an informer's watch decoding does.
func decode(t *testing.T, doc string) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := json.Unmarshal([]byte(doc), ov); err != nil {
		t.Fatal(err)
	}
	return ov
}

const doc = `{"metadata": {"name": "p.v1", "namespace": "team-a", "uid": "u-%d",
  "labels": {"operators.alm.dev/app-type": "p", "operators.alm.dev/owner-namespace": "team-a"},
  "annotations": {"operators.alm.dev/applied-hash": "0123456789abcdef0123456789abcdef"},
  "finalizers": ["operators.alm.dev/cleanup"],
  "ownerReferences": [{"apiVersion": "operators.alm.dev/v1alpha1", "kind": "AppType", "name": "p", "uid": "7c2a1c1e-2a4b-4f43-9a55-0e4c2b7f1b11"}],
  "managedFields": [{"manager": "alm", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
 "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Installed", "message": "every Deployment is available",
  "lastTransitionTime": "2026-11-27T00:00:00Z"}]}}`

func data(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

// The cache's objects carry no managedFields, and strings two objects share are stored once.
func TestTransformStripsAndShares(t *testing.T) {
	a, b := decode(t, doc), decode(t, doc)
	for _, ov := range []*operatorsv1alpha1.OperatorVersion{a, b} {
		if _, err := Transform()(ov); err != nil {
			t.Fatal(err)
		}
		if ov.ManagedFields != nil {
			t.Errorf("OperatorVersion %s/%s keeps managedFields %+v; the cache must not hold them", ov.Namespace, ov.Name, ov.ManagedFields)
		}
	}
	shared := map[string][2]string{
		"namespace":               {a.Namespace, b.Namespace},
		"label value":             {a.Labels["operators.alm.dev/app-type"], b.Labels["operators.alm.dev/app-type"]},
		"ownerReferences[0].uid":  {string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)},
		"ownerReferences[0].kind": {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"finalizers[0]":           {a.Finalizers[0], b.Finalizers[0]},
		"conditions[0].message":   {a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 {
				shared["label key "+k] = [2]string{k, k2}
			}
		}
	}
	for what, s := range shared {
		if s[0] != s[1] || data(s[0]) != data(s[1]) {
			t.Errorf("%s: %q and %q are two copies; want one shared", what, s[0], s[1])
		}
	}
	if a.Labels["operators.alm.dev/owner-namespace"] != "team-a" || a.Status.Conditions[0].Reason != "Installed" ||
		a.Annotations["operators.alm.dev/applied-hash"] != "0123456789abcdef0123456789abcdef" {
		t.Errorf("content changed: %+v", a.ObjectMeta)
	}
}

// The strings every install of a package repeats are held once: an OperatorVersion's package, catalog, phase and
// owned objects' names; an AppType's package, installed version and resolution.
func TestTransformSharesPackageStrings(t *testing.T) {
	const ovDoc = `{"metadata": {"name": "p.v2", "namespace": "team-a"},
	  "spec": {"packageName": "postgres-operator", "replaces": "postgres-operator.v1.0.0", "channel": "stable",
	    "source": {"name": "community-catalog", "namespace": "alm-system"}, "serviceAccountName": "postgres-operator"},
	  "status": {"phase": "Succeeded", "reason": "InstallSucceeded",
	    "owned": [{"version": "v1", "kind": "ServiceAccount", "namespace": "team-a", "name": "postgres-operator", "uid": "u"}]}}`
	const atDoc = `{"metadata": {"name": "postgres", "namespace": "team-a"},
	  "spec": {"package": "postgres-operator", "channel": "stable", "source": "community-catalog"},
	  "status": {"installedVersion": "2.0.0", "installedOperatorVersion": "postgres-operator.v2.0.0",
	    "resolution": [{"name": "postgres-operator.v2.0.0", "version": "2.0.0", "source": "alm-system/community-catalog",
	      "chosen": true, "reason": "the newest version of channel stable"}]}}`
	var ovs [2]*operatorsv1alpha1.OperatorVersion
	var ats [2]*operatorsv1alpha1.AppType
	for i := range 2 {
		ovs[i], ats[i] = &operatorsv1alpha1.OperatorVersion{}, &operatorsv1alpha1.AppType{}
		if err := json.Unmarshal([]byte(ovDoc), ovs[i]); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(atDoc), ats[i]); err != nil {
			t.Fatal(err)
		}
		for _, obj := range []any{ovs[i], ats[i]} {
			if _, err := Transform()(obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, b, x, y := ovs[0], ovs[1], ats[0], ats[1]
	for what, s := range map[string][2]string{
		"OperatorVersion spec.packageName":        {a.Spec.PackageName, b.Spec.PackageName},
		"OperatorVersion spec.replaces":           {a.Spec.Replaces, b.Spec.Replaces},
		"OperatorVersion spec.source.name":        {a.Spec.Source.Name, b.Spec.Source.Name},
		"OperatorVersion spec.serviceAccountName": {a.Spec.ServiceAccountName, b.Spec.ServiceAccountName},
		"OperatorVersion status.phase":            {string(a.Status.Phase), string(b.Status.Phase)},
		"OperatorVersion status.reason":           {a.Status.Reason, b.Status.Reason},
		"OperatorVersion status.owned[0].name":    {a.Status.Owned[0].Name, b.Status.Owned[0].Name},
		"AppType spec.package":                    {x.Spec.Package, y.Spec.Package},
		"AppType spec.source":                     {x.Spec.Source, y.Spec.Source},
		"AppType status.installedOperatorVersion": {x.Status.InstalledOperatorVersion, y.Status.InstalledOperatorVersion},
		"AppType status.resolution[0].reason":     {x.Status.Resolution[0].Reason, y.Status.Resolution[0].Reason},
		"AppType status.resolution[0].source":     {x.Status.Resolution[0].Source, y.Status.Resolution[0].Source},
	} {
		if s[0] == "" || s[0] != s[1] || data(s[0]) != data(s[1]) {
			t.Errorf("%s: %q and %q are two copies; want one shared", what, s[0], s[1])
		}
	}
}

// Lists are held in arrays of their length, not of the room decoding grew them to; the owner references' booleans
// and the Deployment conditions' strings that objects repeat are held once.
func TestTransformHoldsNoSpareRoom(t *testing.T) {
	const ovDoc = `{"metadata": {"name": "p.v1", "namespace": "team-a", "ownerReferences": [{"apiVersion": "operators.alm.dev/v1alpha1",
	  "kind": "AppType", "name": "p", "uid": "u", "controller": true, "blockOwnerDeletion": false}]},
	  "status": {"conditions": [{"type": "A", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-27T00:00:00Z"},
	    {"type": "B", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-27T00:00:00Z"},
	    {"type": "C", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-27T00:00:00Z"}],
	    "owned": [{"version": "v1", "kind": "ConfigMap", "name": "a"}, {"version": "v1", "kind": "ConfigMap", "name": "b"},
	      {"version": "v1", "kind": "ConfigMap", "name": "c"}]}}`
	var ovs [2]*operatorsv1alpha1.OperatorVersion
	for i := range ovs {
		ovs[i] = &operatorsv1alpha1.OperatorVersion{}
		if err := json.Unmarshal([]byte(ovDoc), ovs[i]); err != nil {
			t.Fatal(err)
		}
		if c, o := cap(ovs[i].Status.Conditions), cap(ovs[i].Status.Owned); c == 3 && o == 3 {
			t.Fatalf("decoding gave lists of 3 room for %d and %d: this test needs more", c, o)
		}
		if _, err := Transform()(ovs[i]); err != nil {
			t.Fatal(err)
		}
		if c, o := cap(ovs[i].Status.Conditions), cap(ovs[i].Status.Owned); c != 3 || o != 3 {
			t.Errorf("conditions and owned objects (3 each) held with room for %d and %d", c, o)
		}
		if ovs[i].Status.Owned[2].Name != "c" || ovs[i].Status.Conditions[2].Type != "C" {
			t.Errorf("lists changed: %+v", ovs[i].Status)
		}
	}
	a, b := ovs[0].OwnerReferences[0], ovs[1].OwnerReferences[0]
	if !*a.Controller || *a.BlockOwnerDeletion || a.Controller != b.Controller || a.BlockOwnerDeletion != b.BlockOwnerDeletion {
		t.Errorf("owner references' booleans: %v %v and %v %v, want true and false, one of each shared", a.Controller, a.BlockOwnerDeletion, b.Controller, b.BlockOwnerDeletion)
	}

	const dDoc = `{"status": {"conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
	  "message": "ReplicaSet \"op-5d9c\" has successfully progressed."}]}}`
	var ds [2]*appsv1.Deployment
	for i := range ds {
		ds[i] = &appsv1.Deployment{}
		if err := json.Unmarshal([]byte(dDoc), ds[i]); err != nil {
			t.Fatal(err)
		}
		DeploymentConditions(ds[i].Status.Conditions)
	}
	x, y := ds[0].Status.Conditions[0], ds[1].Status.Conditions[0]
	for what, s := range map[string][2]string{"type": {string(x.Type), string(y.Type)}, "status": {string(x.Status), string(y.Status)},
		"reason": {x.Reason, y.Reason}, "message": {x.Message, y.Message}} {
		if s[0] == "" || s[0] != s[1] || data(s[0]) != data(s[1]) {
			t.Errorf("Deployment condition %s: %q and %q are two copies; want one shared", what, s[0], s[1])
		}
	}
}

// A string no object holds any more is forgotten: names and UIDs of deleted objects do not pile up.
func TestInternForgetsUnheld(t *testing.T) {
	before := shared.Len()
	func() {
		for i := 0; i < 1000; i++ {
			ov := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "gone-" + time.Now().String()}}
			Metadata(ov)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for shared.Len() > before+10 && time.Now().Before(deadline) {
		runtime.GC()
		shared.Sweep() // the table sweeps itself as it grows (weakstring's tests); here, at once
		time.Sleep(10 * time.Millisecond)
	}
	if n := shared.Len(); n > before+10 {
		t.Errorf("the table holds %d strings after the objects that held them were collected, want at most %d", n, before+10)
	}
}
