package entity

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// syncMirror looks up the entity a mirror stands for; it never writes to Konnect. It checks again every sync
// period, so a mirrored control plane deleted in Konnect shows up as not Programmed.
func (r *Reconciler[T]) syncMirror(ctx context.Context, obj T, p *pass, id string) (ctrl.Result, error) {
	st := r.state(obj)
	if st.ID == id && st.Sync.LastSyncTime != nil {
		if due, remaining := syncDue(&st.Sync.LastSyncTime.Time, p.now, r.SyncPeriod); !due {
			r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("mirrors %s %s", r.Kind.Type(), id))
			return ctrl.Result{RequeueAfter: remaining}, nil
		}
	}
	e, err := r.Kind.Mirror.Lookup(ctx, p.api, id)
	if konnectapi.IsNotFound(err) {
		r.Kind.SetState(obj, State{})
		r.written.Delete(obj.GetUID())
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonNotFound, fmt.Sprintf("%s %s does not exist in Konnect (organization %s)", r.Kind.Type(), id, p.refs.Auth.Status.OrganizationID))
		return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
	}
	if err != nil {
		return r.failed(obj, konnectv1alpha1.ReasonUpdateFailed, "get", err)
	}
	r.observe(obj, &e)
	st = State{ID: id, OrgID: p.refs.Auth.Status.OrganizationID, ServerURL: p.serverURL,
		Sync: konnectv1alpha1.SyncStatus{LastSyncTime: &metav1.MicroTime{Time: r.Now()}}}
	r.Kind.SetState(obj, st)
	r.written.Store(obj.GetUID(), written{state: st, observed: &e})
	r.setProgrammed(obj, true, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("mirrors %s %s", r.Kind.Type(), id))
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}
