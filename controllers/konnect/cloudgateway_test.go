package konnect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/kinds/cloudgateway"
	"github.com/almproject/alm/test/konnectsim"
)

// The Dedicated Cloud Gateway kinds from Kong's sample manifests. A network: created at once, Provisioning (with Konnect's
// state) while Konnect provisions it, Programmed only when Konnect says ready; a failed provisioning reports
// Konnect's reason; deleting the objects deletes the networks. The simulator's provisioning advances on reads
// (konnectsim.SetNetworkReadsToReady), so the states are the same on every machine.
func TestCloudGatewayNetworkManifests(t *testing.T) {
	e := newEnv(t, envOptions{})
	// Provisioning does not end until the test says so: the states in between hold however slow the machine.
	e.sim.SetNetworkReadsToReady(1 << 30)
	e.sim.FailNetwork("network-failing", "insufficient cloud provider compute instances")
	e.applyManifests("kong-cloudgateway.yaml")

	net := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	c := e.waitCondition(net, "konnect-network-1", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, cloudgateway.ReasonProvisioning, 30*time.Second)
	if !strings.Contains(c.Message, "initializing") || net.Status.State != "initializing" || net.Status.ID == "" {
		t.Errorf("while provisioning: condition %q, state %q, id %q; want the state initializing and the ID", c.Message, net.Status.State, net.Status.ID)
	}
	reads := count(e.sim, "GET", konnectsim.PathCloudGatewayNetwork)
	e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayTransitGateway{}, "aws-transit-gateway", cloudgateway.ConditionNetworkRefValid, metav1.ConditionFalse, "", 30*time.Second)
	e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{}, "eu-central-1", cloudgateway.ConditionNetworkRefValid, metav1.ConditionFalse, "", 30*time.Second)
	e.eventually(30*time.Second, "the network read again while provisioning", func() error {
		if n := count(e.sim, "GET", konnectsim.PathCloudGatewayNetwork); n < reads+2 {
			return fmt.Errorf("%d reads", n)
		}
		return nil
	})
	e.sim.SetNetworkReadsToReady(0)
	e.waitCondition(net, "konnect-network-1", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if net.Status.State != cloudgateway.StateReady || net.Status.OrgID == "" || net.Status.ServerURL != e.sim.URL() {
		t.Errorf("ready network status %+v", net.Status)
	}

	failed := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	c = e.waitCondition(failed, "konnect-network-failing", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, cloudgateway.ReasonProvisioningFailed, 30*time.Second)
	if !strings.Contains(c.Message, "insufficient cloud provider compute instances") || failed.Status.State != "offline" {
		t.Errorf("failed network: condition %q, state %q; want Konnect's reason and state offline", c.Message, failed.Status.State)
	}

	org := e.sim.OrganizationID(konnectsim.DefaultToken)
	e.checkTransitGatewayAndConfiguration(net.Status.ID, org)
	if got := e.sim.Networks(org); len(got) != 2 {
		t.Fatalf("networks in Konnect %v, want 2", got)
	}
	for _, obj := range []client.Object{
		&cloudv1alpha1.KonnectCloudGatewayTransitGateway{ObjectMeta: metav1.ObjectMeta{Name: "aws-transit-gateway", Namespace: e.ns}},
		&cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "eu-central-1", Namespace: e.ns}},
		&cloudv1alpha1.KonnectCloudGatewayNetwork{ObjectMeta: metav1.ObjectMeta{Name: "konnect-network-1", Namespace: e.ns}},
		&cloudv1alpha1.KonnectCloudGatewayNetwork{ObjectMeta: metav1.ObjectMeta{Name: "konnect-network-failing", Namespace: e.ns}},
	} {
		if err := e.c.Delete(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
		e.eventually(30*time.Second, obj.GetName()+" gone", func() error {
			if err := e.get(obj, obj.GetName()); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%w)", err)
			}
			return nil
		})
	}
	cp := e.sim.ObjectsOf(konnectsim.KindControlPlane)
	if got := e.sim.Networks(org); len(got) != 0 || len(e.sim.TransitGateways(org)) != 0 || len(cp) != 1 || e.sim.DataPlaneGroups(org, cp[0].ID) != 0 {
		t.Errorf("left in Konnect: networks %v, transit gateways %v, data plane groups %d; want none", got, e.sim.TransitGateways(org), e.sim.DataPlaneGroups(org, cp[0].ID))
	}
}

// checkTransitGatewayAndConfiguration: the transit gateway waits for its network, then is Provisioning until
// Konnect says ready; the configuration puts its group on the network and reports the groups' states.
func (e *env) checkTransitGatewayAndConfiguration(networkID, org string) {
	e.t.Helper()
	tg := &cloudv1alpha1.KonnectCloudGatewayTransitGateway{}
	e.waitCondition(tg, "aws-transit-gateway", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if tg.Status.NetworkID != networkID || tg.Status.State != cloudgateway.StateReady || tg.Status.ID == "" {
		e.t.Errorf("transit gateway status %+v, want network %s and state ready", tg.Status, networkID)
	}
	if got := e.sim.TransitGateways(org); len(got) != 1 || got[0] != tg.Status.ID {
		e.t.Errorf("transit gateways in Konnect %v, want [%s]", got, tg.Status.ID)
	}
	cfg := &cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{}
	e.waitCondition(cfg, "eu-central-1", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	e.eventually(30*time.Second, "data plane group ready", func() error {
		if err := e.get(cfg, "eu-central-1"); err != nil {
			return err
		}
		if g := cfg.Status.DataPlaneGroups; len(g) != 1 || g[0].State != cloudgateway.StateReady || g[0].CloudGatewayNetworkID != networkID {
			return fmt.Errorf("data plane groups %+v", g)
		}
		return nil
	})
	if cfg.Status.ControlPlaneID == "" || e.sim.DataPlaneGroups(org, cfg.Status.ControlPlaneID) != 1 {
		e.t.Errorf("configuration status %+v: want its control plane's configuration in Konnect with 1 group", cfg.Status)
	}
}
