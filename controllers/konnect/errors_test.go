package konnect

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
)

// TestReactionsToKonnectErrors: Konnect answers a create with each error status the operator handles, in the shape
// Konnect sends it (the simulator holds it to Kong's OpenAPI document), and the operator reacts as it must. A
// refusal that retrying cannot change (400, 401, 403, 404) is a failed Programmed condition naming the status and
// waits for the object to change: no retry, and after the change one create. Everything else (409 may be our own
// earlier create, 429 after its Retry-After, 5xx) is retried until it succeeds, without a change. Never a duplicate.
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
			e.sim.FailNext(http.MethodPost, konnectsim.PathServices, 1, tc.status)
			e.create(serviceObj("svc", "cp", "example.com"))
			svc := &configurationv1alpha1.KongService{}
			if !tc.transient {
				c := e.waitCondition(svc, "svc", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, 30*time.Second)
				if !strings.Contains(c.Message, fmt.Sprintf("HTTP %d", tc.status)) {
					t.Errorf("condition %q does not name HTTP %d", c.Message, tc.status)
				}
				e.mutate(svc, "svc", func() { svc.Spec.Port = 8080 })
			}
			e.waitProgrammed(svc, "svc")
			if n := len(e.simByUID(konnectsim.KindService, svc.UID)); n != 1 {
				t.Errorf("%d services in Konnect, want 1", n)
			}
			// A terminal refusal is not retried: the create after the change is the second POST, and no PUT follows.
			if !tc.transient {
				if posts, puts := e.sim.Count("POST "+konnectsim.PathServices), e.sim.Count("PUT "+konnectsim.PathService); posts != 2 || puts != 0 {
					t.Errorf("%d creates and %d updates, want 2 and 0: %v", posts, puts, e.sim.Counters())
				}
			}
		})
	}
}
