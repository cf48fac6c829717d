package konnect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/kinds/cloudgateway"
	"github.com/almproject/alm/test/konnectsim"
)

// A Dedicated Cloud Gateway network from Kong's sample manifest: created at once, Provisioning (with Konnect's
// state) while Konnect provisions it, Programmed only when Konnect says ready; a failed provisioning reports
// Konnect's reason; deleting the objects deletes the networks. The simulator's provisioning advances on reads
// (konnectsim.SetNetworkReadsToReady), so the states are the same on every machine.
func TestCloudGatewayNetworkManifests(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.sim.SetNetworkReadsToReady(5)
	e.sim.FailNetwork("network-failing", "insufficient cloud provider compute instances")
	e.applyManifests("kong-cloudgateway.yaml")

	net := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	c := e.waitCondition(net, "konnect-network-1", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, cloudgateway.ReasonProvisioning, 30*time.Second)
	if !strings.Contains(c.Message, "initializing") || net.Status.State != "initializing" || net.Status.ID == "" {
		t.Errorf("while provisioning: condition %q, state %q, id %q; want the state initializing and the ID", c.Message, net.Status.State, net.Status.ID)
	}
	e.waitCondition(net, "konnect-network-1", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if net.Status.State != cloudgateway.StateReady || net.Status.OrgID == "" || net.Status.ServerURL != e.sim.URL() {
		t.Errorf("ready network status %+v", net.Status)
	}
	if n := count(e.sim, "GET", konnectsim.PathCloudGatewayNetwork); n < 5 {
		t.Errorf("%d network reads, want at least the 5 provisioning takes", n)
	}

	failed := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	c = e.waitCondition(failed, "konnect-network-failing", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, cloudgateway.ReasonProvisioningFailed, 30*time.Second)
	if !strings.Contains(c.Message, "insufficient cloud provider compute instances") || failed.Status.State != "offline" {
		t.Errorf("failed network: condition %q, state %q; want Konnect's reason and state offline", c.Message, failed.Status.State)
	}

	org := e.sim.OrganizationID(konnectsim.DefaultToken)
	if got := e.sim.Networks(org); len(got) != 2 {
		t.Fatalf("networks in Konnect %v, want 2", got)
	}
	for _, name := range []string{"konnect-network-1", "konnect-network-failing"} {
		if err := e.c.Delete(e.ctx, &cloudv1alpha1.KonnectCloudGatewayNetwork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(30*time.Second, "networks deleted from Konnect", func() error {
		if got := e.sim.Networks(org); len(got) != 0 {
			return fmt.Errorf("networks left %v", got)
		}
		return nil
	})
}
