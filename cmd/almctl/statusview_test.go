package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// An AppType none of whose versions has Succeeded yet shows the version being installed and why it is not running
// (seen on a real node: an image that cannot be pulled read "not resolved yet").
func TestStatusShowsTheVersionBeingInstalled(t *testing.T) {
	at := almv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "op"}, Spec: almv1alpha1.AppTypeSpec{Package: "op"}}
	ov := almv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "op.v1.0.0"},
		Spec:       almv1alpha1.OperatorVersionSpec{PackageName: "op"},
		Status: almv1alpha1.OperatorVersionStatus{Phase: almv1alpha1.PhaseInstalling, Reason: almv1alpha1.ReasonImagePullFailed,
			Message: "Deployment op: pod op-1 container operator: image alm.local/op:1.0.0 not found or not pullable"},
	}
	st := &clusterState{appTypes: []almv1alpha1.AppType{at}, versions: []almv1alpha1.OperatorVersion{ov},
		catalogs: map[string]*almv1alpha1.CatalogSource{}, now: time.Now()}
	var out strings.Builder
	writeSummary(&out, st, false)
	for _, want := range []string{"Installing", "ImagePullFailed: Deployment op", "alm.local/op:1.0.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("almctl status does not say %q:\n%s", want, out.String())
		}
	}
}
