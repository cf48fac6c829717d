package konnect

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/metricstest"
)

// TestReactionsToKonnectErrors: Konnect answers a create with each error status the operator handles, in the shape
// Konnect sends it (the simulator holds it to Kong's OpenAPI document), and the operator reacts as it must. A
// refusal that retrying cannot change (400, 401, 403, 404) is a failed Programmed condition naming the status, not
// retried with backoff, and the object is created once it changes. Everything else (409 may be our own earlier
// create, 429 after its Retry-After, 5xx) is retried until it succeeds, without a change. Never a duplicate.
func TestReactionsToKonnectErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		transient bool
	}{
		{http.StatusBadRequest, false}, {http.StatusUnauthorized, false}, {http.StatusForbidden, false},
		{http.StatusNotFound, false}, {http.StatusConflict, true}, {http.StatusTooManyRequests, true},
		{http.StatusInternalServerError, true}, {http.StatusBadGateway, true}, {http.StatusServiceUnavailable, true},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			e := newEnv(t, envOptions{syncPeriod: time.Hour})
			e.readyControlPlane("cp")
			terminalBefore := terminalErrors(t)
			svc := &configurationv1alpha1.KongService{}
			if tc.transient {
				e.sim.FailNext(http.MethodPost, konnectsim.PathServices, 1, tc.status)
				e.create(serviceObj("svc", "cp", "example.com"))
			} else {
				// Konnect keeps refusing until the object changes.
				e.sim.AddFault(konnectsim.FaultRule{Method: http.MethodPost, Path: konnectsim.PathServices, Status: tc.status})
				e.create(serviceObj("svc", "cp", "example.com"))
				c := e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, 30*time.Second)
				if !strings.Contains(c.Message, fmt.Sprintf("HTTP %d", tc.status)) {
					t.Errorf("condition %q does not name HTTP %d", c.Message, tc.status)
				}
				// Not retried with backoff: the reconciler ended with a terminal error. controller-runtime counts it
				// when the reconcile returns, after the status write the condition came from: wait for it.
				var n float64
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					if n = terminalErrors(t) - terminalBefore; n >= 1 || time.Now().After(deadline) {
						break
					}
				}
				if n < 1 {
					t.Errorf("%g terminal reconcile errors after 10s, want at least 1: the refusal is retried with backoff", n)
				}
				e.sim.ClearFaults()
				e.mutate(svc, "svc", func() { svc.Spec.Port = 8080 })
			}
			e.waitProgrammed(svc, "svc")
			if n := len(e.simByUID(konnectsim.KindService, svc.UID)); n != 1 {
				t.Errorf("%d services in Konnect, want 1", n)
			}
			if n := terminalErrors(t) - terminalBefore; tc.transient && n != 0 {
				t.Errorf("%g terminal reconcile errors for a failure retrying can change, want 0", n)
			}
		})
	}
}

// terminalErrors is controller-runtime's count of reconciles that ended in a reconcile.TerminalError (not retried),
// over every controller of the process.
func terminalErrors(t *testing.T) float64 {
	t.Helper()
	f, err := metricstest.Gather(crmetrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	return f.Sum("controller_runtime_terminal_reconcile_errors_total", nil)
}
