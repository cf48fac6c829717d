package upstreams

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// An upstream without a name is named after its object; a target names its upstream's entity; a target is
// deleted through its upstream; its state keeps the upstream's ID.
func TestBodiesAndState(t *testing.T) {
	u := &configurationv1alpha1.KongUpstream{ObjectMeta: metav1.ObjectMeta{Name: "backend", Namespace: "ns", UID: "u1"}}
	body, err := Upstream().Desired(u, entity.Refs{})
	if err != nil || body["name"] != "backend" {
		t.Errorf("upstream body %v %v, want name backend", body, err)
	}
	tgt := &configurationv1alpha1.KongTarget{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns", UID: "t1"},
		Spec: configurationv1alpha1.KongTargetSpec{KongTargetAPISpec: configurationv1alpha1.KongTargetAPISpec{Target: "10.0.0.1:80", Weight: 5}}}
	kind := Target()
	body, err = kind.Desired(tgt, entity.Refs{ParentID: "up-id"})
	if err != nil || body["upstream"].(map[string]any)["id"] != "up-id" || body["weight"] != int64(5) {
		t.Errorf("target body %v %v", body, err)
	}
	kind.SetState(tgt, entity.State{ID: "t-id", ControlPlaneID: "cp-id", ParentID: "up-id"})
	if st := kind.State(tgt); st.ParentID != "up-id" || tgt.Status.Konnect.UpstreamID != "up-id" {
		t.Errorf("state %+v, status %+v: want the upstream's ID kept", st, tgt.Status.Konnect)
	}
	if got := konnectapi.InParent("cp-id", "up-id"); got != "cp-id/up-id" {
		t.Errorf("scope %q", got)
	}
}
