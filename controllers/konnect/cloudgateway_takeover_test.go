package konnect

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Kong/sdk-konnect-go/models/components"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
)

// Networks and transit gateways carry no tags: what names a lost create's entity is its name. These tests show the
// look-up by name, spec.adopt, and the updates Konnect's document allows (a network's name, an AWS transit
// gateway's cidr_blocks) for the Dedicated Cloud Gateway kinds.

const providerAccount = "929b2449-c69f-44c4-b6ad-9ecec6f811ae"

func cloudNetwork(name, konnectName string) *cloudv1alpha1.KonnectCloudGatewayNetwork {
	return &cloudv1alpha1.KonnectCloudGatewayNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.KonnectCloudGatewayNetworkSpec{
			Name: konnectName, CloudGatewayProviderAccountID: providerAccount, Region: "us-west",
			AvailabilityZones: []string{"us-west-1"}, CidrBlock: "10.0.0.0/24",
			KonnectConfiguration: konnectv1alpha1.KonnectConfiguration{APIAuthConfigurationRef: konnectv1alpha1.KonnectAPIAuthConfigurationRef{Name: "auth"}},
		},
	}
}

func cloudTransitGateway(name, network, konnectName string, cidrs ...string) *cloudv1alpha1.KonnectCloudGatewayTransitGateway {
	return &cloudv1alpha1.KonnectCloudGatewayTransitGateway{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.KonnectCloudGatewayTransitGatewaySpec{
			NetworkRef: cloudv1alpha1.ObjectRef{Type: cloudv1alpha1.ObjectRefNamespacedRef, NamespacedRef: &cloudv1alpha1.NamespacedRef{Name: network}},
			KonnectTransitGatewayAPISpec: cloudv1alpha1.KonnectTransitGatewayAPISpec{
				Type: cloudv1alpha1.TransitGatewayTypeAWSTransitGateway,
				AWSTransitGateway: &cloudv1alpha1.AWSTransitGateway{Name: konnectName, CIDRBlocks: cidrs,
					AttachmentConfig: cloudv1alpha1.AwsTransitGatewayAttachmentConfig{TransitGatewayID: "tgw-1", RAMShareArn: "arn:aws:ram:us-west-2:123456789012:resource-share/1"}},
			},
		},
	}
}

// A create whose answer is lost (Konnect made the network, the operator got a 502) is followed by a look-up by name,
// not by a second create: one network in Konnect, the object Programmed with its ID. The same for a transit
// gateway on it.
func TestCloudGatewayLostCreateIsTakenOver(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.sim.SetNetworkReadsToReady(0)
	e.createSecretAuth("auth", "token")
	org := e.sim.OrganizationID(konnectsim.DefaultToken)

	e.sim.LoseNext(http.MethodPost, konnectsim.PathCloudGatewayNetworks, 1)
	e.create(cloudNetwork("net", "lost-answer"))
	net := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	e.waitCondition(net, "net", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if got := e.sim.Networks(org); len(got) != 1 || got[0] != net.Status.ID {
		t.Errorf("networks in Konnect %v, want exactly the object's [%s]", got, net.Status.ID)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathCloudGatewayNetworks); n != 1 {
		t.Errorf("%d network creates, want 1 (the lost one; then a look-up by name)", n)
	}

	e.sim.LoseNext(http.MethodPost, konnectsim.PathCloudGatewayTransitGateways, 1)
	e.create(cloudTransitGateway("tg", "net", "lost-tg", "10.1.0.0/24"))
	tg := &cloudv1alpha1.KonnectCloudGatewayTransitGateway{}
	e.waitCondition(tg, "tg", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if got := e.sim.TransitGateways(org); len(got) != 1 || got[0] != tg.Status.ID {
		t.Errorf("transit gateways in Konnect %v, want exactly the object's [%s]", got, tg.Status.ID)
	}

	// A network of the spec's name that differs in what Konnect cannot change is not taken over.
	other := cloudNetwork("other", "lost-answer")
	other.Spec.Region = "us-east"
	e.create(other)
	c := e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayNetwork{}, "other", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, 30*time.Second)
	if !strings.Contains(c.Message, `named "lost-answer" already exists`) || !strings.Contains(c.Message, "region") {
		t.Errorf("condition %q, want the name taken and the field region", c.Message)
	}
}

// A changed spec reaches Konnect: a network's new name (update-network), an AWS transit gateway's new cidr_blocks
// (update-transit-gateway); an edit made in Konnect is put back at the next read. Fields Konnect cannot change are
// refused by the API server.
func TestCloudGatewayUpdates(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Second})
	e.sim.SetNetworkReadsToReady(0)
	e.createSecretAuth("auth", "token")
	org := e.sim.OrganizationID(konnectsim.DefaultToken)
	e.create(cloudNetwork("net", "before"))
	e.create(cloudTransitGateway("tg", "net", "tg", "10.1.0.0/24"))
	net, tg := &cloudv1alpha1.KonnectCloudGatewayNetwork{}, &cloudv1alpha1.KonnectCloudGatewayTransitGateway{}
	e.waitProgrammed(net, "net")
	e.waitProgrammed(tg, "tg")
	inKonnect := func(id, field, want string) {
		t.Helper()
		e.eventually(30*time.Second, fmt.Sprintf("%s of %s in Konnect is %s", field, id, want), func() error {
			if got := fmt.Sprint(e.sim.CloudGatewayEntity(org, id)[field]); got != want {
				return fmt.Errorf("%s", got)
			}
			return nil
		})
	}

	e.mutate(net, "net", func() { net.Spec.Name = "after" })
	inKonnect(net.Status.ID, "name", "after")
	e.mutate(tg, "tg", func() { tg.Spec.AWSTransitGateway.CIDRBlocks = []string{"10.1.0.0/24", "10.2.0.0/24"} })
	inKonnect(tg.Status.ID, "cidr_blocks", "[10.1.0.0/24 10.2.0.0/24]")

	// Edits made in Konnect are put back.
	e.sim.EditCloudGatewayEntity(org, net.Status.ID, map[string]any{"name": "edited"})
	e.sim.EditCloudGatewayEntity(org, tg.Status.ID, map[string]any{"cidr_blocks": []any{"10.9.0.0/24"}})
	inKonnect(net.Status.ID, "name", "after")
	inKonnect(tg.Status.ID, "cidr_blocks", "[10.1.0.0/24 10.2.0.0/24]")

	for _, tc := range []struct {
		change func()
		want   string
	}{
		{func() { tg.Spec.AWSTransitGateway.Name = "renamed" }, "awsTransitGateway.name is immutable"},
		{func() { tg.Spec.AWSTransitGateway.AttachmentConfig.TransitGatewayID = "tgw-2" }, "awsTransitGateway.attachment_config is immutable"},
		{func() {
			tg.Spec.AWSTransitGateway.DNSConfig = []cloudv1alpha1.TransitGatewayDNSConfig{{DomainProxyList: []string{"example.com"}}}
		}, "awsTransitGateway.dns_config is immutable"},
	} {
		// (The operator writes the status meanwhile: a conflict is retried, the refusal is what counts.)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := e.get(tg, "tg"); err != nil {
				return err
			}
			tc.change()
			return e.c.Update(e.ctx, tg)
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update: %v, want a refusal naming %q", err, tc.want)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.get(net, "net"); err != nil {
			return err
		}
		state := "offline"
		net.Spec.State = &state
		return e.c.Update(e.ctx, net)
	})
	if err == nil || !strings.Contains(err.Error(), "state is immutable") {
		t.Errorf("update of spec.state: %v, want a refusal", err)
	}
}

// spec.adopt takes a network made outside the operator over by its ID: mode match only if it equals the spec, mode
// override renaming it; a transit gateway likewise. The adopted entities are not created again.
func TestCloudGatewayAdopt(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.sim.SetNetworkReadsToReady(0)
	e.createSecretAuth("auth", "token")
	org := e.sim.OrganizationID(konnectsim.DefaultToken)
	ctx := context.Background()
	made, err := e.sdk().CloudGateways.CreateNetwork(ctx, components.CreateNetworkRequest{Name: "existing",
		CloudGatewayProviderAccountID: providerAccount, Region: "us-west", AvailabilityZones: []string{"us-west-1"}, CidrBlock: "10.0.0.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	id := made.Network.ID
	adopt := func(mode configurationv1alpha1.AdoptMode, id string) *configurationv1alpha1.AdoptOptions {
		return &configurationv1alpha1.AdoptOptions{From: configurationv1alpha1.AdoptSourceKonnect, Mode: mode, Konnect: &configurationv1alpha1.AdoptKonnectOptions{ID: id}}
	}

	mismatch := cloudNetwork("match", "other-name")
	mismatch.Spec.Adopt = adopt(configurationv1alpha1.AdoptModeMatch, id)
	e.create(mismatch)
	c := e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayNetwork{}, "match", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonAdoptionMismatch, 30*time.Second)
	if !strings.Contains(c.Message, "differs from the spec in name") {
		t.Errorf("match-mode condition %q, want the field name", c.Message)
	}
	immutable := cloudNetwork("immutable", "existing")
	immutable.Spec.CidrBlock = "10.5.0.0/24"
	immutable.Spec.Adopt = adopt(configurationv1alpha1.AdoptModeOverride, id)
	e.create(immutable)
	c = e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayNetwork{}, "immutable", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonAdoptionFailed, 30*time.Second)
	if !strings.Contains(c.Message, "cidr_block, which Konnect cannot change") {
		t.Errorf("override-mode condition %q, want the field cidr_block Konnect cannot change", c.Message)
	}
	missing := cloudNetwork("missing", "missing")
	missing.Spec.Adopt = adopt(configurationv1alpha1.AdoptModeOverride, "1b4a2c8e-0000-4000-8000-000000000000")
	e.create(missing)
	e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayNetwork{}, "missing", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonAdoptionFailed, 30*time.Second)

	override := cloudNetwork("override", "adopted")
	override.Spec.Adopt = adopt(configurationv1alpha1.AdoptModeOverride, id)
	e.create(override)
	net := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	e.waitCondition(net, "override", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if net.Status.ID != id || e.sim.CloudGatewayEntity(org, id)["name"] != "adopted" || len(e.sim.Networks(org)) != 1 {
		t.Errorf("adopted network: status ID %s (want %s), name in Konnect %v (want adopted), networks %v (want one)",
			net.Status.ID, id, e.sim.CloudGatewayEntity(org, id)["name"], e.sim.Networks(org))
	}

	tgs, err := e.sdk().CloudGateways.CreateTransitGateway(ctx, id, components.CreateCreateTransitGatewayRequestAWSTransitGateway(components.AWSTransitGateway{
		Name: "existing-tg", CidrBlocks: []string{"10.1.0.0/24"},
		TransitGatewayAttachmentConfig: components.AwsTransitGatewayAttachmentConfig{Kind: components.AWSTransitGatewayAttachmentConfigAWSTransitGatewayAttachmentTypeAwsTransitGatewayAttachment,
			TransitGatewayID: "tgw-1", RAMShareArn: "arn:aws:ram:us-west-2:123456789012:resource-share/1"}}))
	if err != nil {
		t.Fatal(err)
	}
	tgID := tgs.TransitGatewayResponse.AwsTransitGatewayResponse.ID
	tg := cloudTransitGateway("tg", "override", "existing-tg", "10.3.0.0/24")
	tg.Spec.Adopt = adopt(configurationv1alpha1.AdoptModeOverride, tgID)
	e.create(tg)
	e.waitCondition(tg, "tg", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	if got := e.sim.TransitGateways(org); tg.Status.ID != tgID || !slices.Equal(got, []string{tgID}) ||
		fmt.Sprint(e.sim.CloudGatewayEntity(org, tgID)["cidr_blocks"]) != "[10.3.0.0/24]" {
		t.Errorf("adopted transit gateway: status ID %s (want %s), in Konnect %v with cidr_blocks %v (want [10.3.0.0/24])",
			tg.Status.ID, tgID, got, e.sim.CloudGatewayEntity(org, tgID)["cidr_blocks"])
	}

	e.checkConfigurationAdoption(adopt)
}

// checkConfigurationAdoption: a control plane's configuration made outside the operator is taken over by its ID;
// mode match refuses a different version, mode override puts the spec's.
func (e *env) checkConfigurationAdoption(adopt func(configurationv1alpha1.AdoptMode, string) *configurationv1alpha1.AdoptOptions) {
	e.t.Helper()
	cp := controlPlaneObj("cp", "auth")
	e.create(cp)
	e.waitProgrammed(cp, "cp")
	version := "3.8"
	put, err := e.sdk().CloudGateways.CreateConfiguration(context.Background(), components.CreateConfigurationRequest{ControlPlaneID: cp.Status.ID,
		ControlPlaneGeo: components.ControlPlaneGeoUs, Version: &version, DataplaneGroups: []components.CreateConfigurationDataPlaneGroup{}})
	if err != nil {
		e.t.Fatal(err)
	}
	id := put.ConfigurationManifest.ID
	config := func(name string, mode configurationv1alpha1.AdoptMode) *cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration {
		return &cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfigurationSpec{Version: "3.9", ControlPlaneRef: *cpRef("cp"), Adopt: adopt(mode, id)}}
	}
	e.create(config("match", configurationv1alpha1.AdoptModeMatch))
	c := e.waitCondition(&cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{}, "match", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonAdoptionMismatch, 30*time.Second)
	if !strings.Contains(c.Message, "differs from the spec in version") {
		e.t.Errorf("match-mode condition %q, want the field version", c.Message)
	}
	got := &cloudv1alpha1.KonnectCloudGatewayDataPlaneGroupConfiguration{}
	e.create(config("override", configurationv1alpha1.AdoptModeOverride))
	e.waitCondition(got, "override", konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, 30*time.Second)
	read, err := e.sdk().CloudGateways.GetConfiguration(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	if got.Status.ID != id || read.ConfigurationManifest.Version == nil || *read.ConfigurationManifest.Version != "3.9" {
		e.t.Errorf("adopted configuration: status ID %s (want %s), version in Konnect %v (want 3.9)", got.Status.ID, id, read.ConfigurationManifest.Version)
	}
}
