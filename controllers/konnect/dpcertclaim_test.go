package konnect

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
)

// Two objects declaring the same data plane client certificate: the second one's create fails, so its retry looks
// for the certificate an earlier attempt may have made, by its PEM (Konnect keeps no tags on it), and finds the
// first object's. It does not adopt it: it is not Programmed (EntityClaimed, naming the first object), nothing is
// written for it, and deleting it leaves the first object's certificate in Konnect.
func TestDataPlaneCertificateClaimedByAnother(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	first := dpCertificateObj("first", "cp")
	e.create(first)
	e.waitProgrammed(first, "first")
	certID := first.Status.Konnect.ID

	e.sim.FailNext(http.MethodPost, konnectsim.PathDPCertificates, 1, http.StatusInternalServerError)
	second := dpCertificateObj("second", "cp")
	second.Spec.Cert = first.Spec.Cert
	e.create(second)
	c := e.waitCondition(second, "second", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonEntityClaimed, 30*time.Second)
	t.Logf("second: %s", c.Message)
	if !strings.Contains(c.Message, e.ns+"/first") || !strings.Contains(c.Message, certID) {
		t.Errorf("the message does not name KongDataPlaneClientCertificate %s/first and certificate %s: %s", e.ns, certID, c.Message)
	}
	if second.Status.Konnect != nil && second.Status.Konnect.ID != "" {
		t.Errorf("second has Konnect ID %s in status, want none", second.Status.Konnect.ID)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathDPCertificates); n != 2 {
		t.Errorf("%d certificate creates, want 2: first's and second's failed one", n)
	}
	for _, m := range []string{http.MethodPut, http.MethodDelete} {
		if n := count(e.sim, m, konnectsim.PathDPCertificate); n != 0 {
			t.Errorf("%d %s of the certificate, want none", n, m)
		}
	}

	if err := e.c.Delete(e.ctx, second); err != nil {
		t.Fatal(err)
	}
	e.waitGone(second, "second")
	var inCP []string
	for _, o := range e.sim.ObjectsOf(konnectsim.KindDPCertificate) {
		if o.ControlPlaneID == cp.Status.ID {
			inCP = append(inCP, o.ID)
		}
	}
	if len(inCP) != 1 || inCP[0] != certID {
		t.Errorf("certificates in the control plane after deleting second: %v, want first's %s", inCP, certID)
	}
	e.waitProgrammed(&configurationv1alpha1.KongDataPlaneClientCertificate{}, "first")
}
