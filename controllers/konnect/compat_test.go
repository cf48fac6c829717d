package konnect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds"
	"github.com/almproject/alm/test/konnectsim"
)

// Kong Gateway Operator compatibility: the reference types, mirrors, control plane groups, consumer credentials
// and the fields Konnect stores differently from how they are declared.

// sdk is a Konnect client of the test's simulator, standing for a person using Konnect directly.
func (e *env) sdk() *sdkkonnectgo.SDK {
	token := konnectsim.DefaultToken
	return sdkkonnectgo.New(
		sdkkonnectgo.WithServerURL(e.sim.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: &token}),
		sdkkonnectgo.WithClient(e.sim.HTTPClient()),
	)
}

// The API refuses what Kong's operator refuses, with its messages.
func TestKGOValidationRules(t *testing.T) {
	e := newEnv(t, envOptions{})
	mustFail := func(obj client.Object, want string) {
		t.Helper()
		obj.SetNamespace(e.ns)
		err := e.c.Create(e.ctx, obj)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("creating %s: error %v, want one containing %q", obj.GetName(), err, want)
		}
	}
	id := configurationv1alpha1.KonnectIDType("5f9fd312-a987-4628-b4c5-bb4f4fddd5f7")

	svc := serviceObj("by-id", "cp", "example.com")
	svc.Spec.ControlPlaneRef = &configurationv1alpha1.ControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKonnectID, KonnectID: &id}
	mustFail(svc, "'konnectID' type is not supported")

	svc = serviceObj("kic", "cp", "example.com")
	svc.Spec.ControlPlaneRef = &configurationv1alpha1.ControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKIC}
	mustFail(svc, "KIC is not supported as control plane")

	svc = serviceObj("untyped", "cp", "example.com")
	svc.Spec.ControlPlaneRef.Type = "" // defaults to kic, which cannot name a KonnectGatewayControlPlane
	mustFail(svc, "when type is kic, konnectID and konnectNamespacedRef must not be set")

	mirror := &konnectv1alpha2.KonnectGatewayControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "mirror"},
		Spec: konnectv1alpha2.KonnectGatewayControlPlaneSpec{
			Source:               ptrTo(konnectv1alpha2.EntitySourceMirror),
			KonnectConfiguration: controlPlaneObj("x", "auth").Spec.KonnectConfiguration,
		},
	}
	mustFail(mirror.DeepCopy(), "mirror field must be set for type Mirror")
	withRequest := mirror.DeepCopy()
	withRequest.Spec.Mirror = &konnectv1alpha2.MirrorSpec{Konnect: konnectv1alpha2.MirrorKonnect{ID: konnectv1alpha2.KonnectIDType(id)}}
	withRequest.Spec.CreateControlPlaneRequest = &konnectv1alpha2.CreateControlPlaneRequest{Name: "x"}
	mustFail(withRequest, "createControlPlaneRequest fields cannot be set for type Mirror")
	origin := controlPlaneObj("origin", "auth")
	origin.Spec.Mirror = &konnectv1alpha2.MirrorSpec{Konnect: konnectv1alpha2.MirrorKonnect{ID: konnectv1alpha2.KonnectIDType(id)}}
	mustFail(origin, "mirror field cannot be set for type Origin")
	notGroup := controlPlaneObj("not-group", "auth")
	notGroup.Spec.Members = []corev1.LocalObjectReference{{Name: "a"}}
	mustFail(notGroup, "spec.members is only applicable for ControlPlanes that are created as groups")

	// A KIC consumer (no controlPlaneRef, or type kic) is valid: Kong Ingress Controller configures it.
	for name, ref := range map[string]*configurationv1alpha1.ControlPlaneRef{
		"kic-none": nil, "kic-typed": {Type: configurationv1alpha1.ControlPlaneRefKIC},
	} {
		e.create(&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: name}, Username: name, Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: ref}})
	}

	// controlPlaneRef may be corrected until the service is Programmed, not after.
	e.create(serviceObj("svc", "typo", "example.com"))
	got := &configurationv1alpha1.KongService{}
	e.waitCondition(got, "svc", konnectv1alpha1.ConditionControlPlaneRefValid, metav1.ConditionFalse, "", 30*time.Second)
	e.readyControlPlane("cp")
	e.mutate(got, "svc", func() { got.Spec.ControlPlaneRef = cpRef("cp") })
	e.waitProgrammed(got, "svc")
	got.Spec.ControlPlaneRef = cpRef("other")
	if err := e.c.Update(e.ctx, got); err == nil || !strings.Contains(err.Error(), "spec.controlPlaneRef is immutable when an entity is already Programmed") {
		t.Errorf("moving a Programmed service: error %v", err)
	}
}

// Manifests in Kong Gateway Operator's form apply as they are and end Programmed.
func TestKGOManifestsApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.waitAllProgrammed(e.applyManifests("kgo-manifests.yaml"))
	group := &konnectv1alpha2.KonnectGatewayControlPlane{}
	member := &konnectv1alpha2.KonnectGatewayControlPlane{}
	if err := e.get(group, "control-plane-group"); err != nil {
		t.Fatal(err)
	}
	if err := e.get(member, "gateway-control-plane"); err != nil {
		t.Fatal(err)
	}
	if got := e.sim.GroupMembers(group.Status.ID); !slices.Equal(got, []string{member.Status.ID}) {
		t.Errorf("group members %v, want [%s]", got, member.Status.ID)
	}
	if n := len(e.sim.ObjectsOf(konnectsim.KindKeyAuth)); n != 1 {
		t.Errorf("%d key-auth credentials in Konnect, want 1", n)
	}
}

// applyManifests creates the objects of testdata/file (${SERVER_URL} and ${TOKEN} filled in) as they are written.
func (e *env) applyManifests(file string) []*unstructured.Unstructured {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		e.t.Fatal(err)
	}
	text := strings.NewReplacer("${SERVER_URL}", e.sim.URL(), "${TOKEN}", konnectsim.DefaultToken, "${NAMESPACE}", e.ns).Replace(string(raw))
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			e.t.Fatal(err)
		}
		e.create(u)
		objs = append(objs, u)
	}
	return objs
}

// waitAllProgrammed waits until every object that the operator programs is Programmed.
func (e *env) waitAllProgrammed(objs []*unstructured.Unstructured) {
	e.t.Helper()
	for _, u := range objs {
		switch u.GetKind() {
		case "Secret", "KonnectAPIAuthConfiguration", "KongPlugin", "KongReferenceGrant":
			continue
		}
		e.eventually(30*time.Second, u.GetKind()+" "+u.GetName()+" Programmed", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(u.GroupVersionKind())
			if err := e.get(got, u.GetName()); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == konnectv1alpha1.ConditionProgrammed && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("conditions %v", conds)
		})
	}
}

// Objects for Kong Ingress Controller are not this operator's: no finalizer, no status, no Konnect call.
func TestKICObjectsAreLeftAlone(t *testing.T) {
	e := newEnv(t, envOptions{})
	cpObj := e.readyControlPlane("cp")
	e.create(&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "kic"}, Username: "kic"})
	e.create(&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "kic-typed"}, Username: "kic-typed",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: &configurationv1alpha1.ControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKIC}}})
	route := routeObj("kic-route", "svc")
	route.Spec.ServiceRef = nil
	e.create(route)
	// A Konnect consumer created after them is the barrier: once it is Programmed, the others were seen too.
	e.create(&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "konnect"}, Username: "konnect",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("cp")}})
	e.waitProgrammed(&configurationv1.KongConsumer{}, "konnect")

	for _, o := range []struct {
		obj  client.Object
		name string
	}{{&configurationv1.KongConsumer{}, "kic"}, {&configurationv1.KongConsumer{}, "kic-typed"}, {&configurationv1alpha1.KongRoute{}, "kic-route"}} {
		if err := e.get(o.obj, o.name); err != nil {
			t.Fatal(err)
		}
		if controllerutil.ContainsFinalizer(o.obj, entity.Finalizer) {
			t.Errorf("%s got the finalizer", o.name)
		}
		if _, err := e.condition(o.obj, o.name, konnectv1alpha1.ConditionProgrammed); err == nil {
			t.Errorf("%s got a Programmed condition", o.name)
		}
	}
	consumers := e.simObjects(konnectsim.KindConsumer)
	if len(consumers) != 1 || consumers[0].Name != "konnect" {
		t.Errorf("consumers in Konnect = %+v, want only konnect in %s", consumers, cpObj.Status.ID)
	}
}

// A route may name its service's control plane too; naming another one is reported, and nothing is sent.
func TestRouteControlPlaneMustMatchItsService(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.waitProgrammed(&configurationv1alpha1.KongService{}, "svc")
	same := routeObj("same", "svc")
	same.Spec.ControlPlaneRef = cpRef("cp")
	e.create(same)
	other := routeObj("other", "svc")
	other.Spec.ControlPlaneRef = cpRef("elsewhere")
	e.create(other)
	e.waitProgrammed(&configurationv1alpha1.KongRoute{}, "same")
	c := e.waitCondition(&configurationv1alpha1.KongRoute{}, "other", konnectv1alpha1.ConditionControlPlaneRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if !strings.Contains(c.Message, "controlPlaneRef names KonnectGatewayControlPlane elsewhere") {
		t.Errorf("message %q", c.Message)
	}
	if n := len(e.simObjects(konnectsim.KindRoute)); n != 1 {
		t.Errorf("%d routes in Konnect, want 1", n)
	}
}

// A mirror stands for a control plane made elsewhere: it is looked up, used by its children, and never changed
// or deleted in Konnect.
func TestMirrorControlPlane(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: 2 * time.Second})
	made, err := e.sdk().ControlPlanes.CreateControlPlane(e.ctx, components.CreateControlPlaneRequest{Name: "made-in-the-ui"})
	if err != nil {
		t.Fatal(err)
	}
	id := made.ControlPlane.ID
	e.create(authConfig("auth", e.sim.URL()))
	mirrorOf := func(name, id string) *konnectv1alpha2.KonnectGatewayControlPlane {
		return &konnectv1alpha2.KonnectGatewayControlPlane{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: konnectv1alpha2.KonnectGatewayControlPlaneSpec{
				Source:               ptrTo(konnectv1alpha2.EntitySourceMirror),
				Mirror:               &konnectv1alpha2.MirrorSpec{Konnect: konnectv1alpha2.MirrorKonnect{ID: konnectv1alpha2.KonnectIDType(id)}},
				KonnectConfiguration: controlPlaneObj(name, "auth").Spec.KonnectConfiguration,
			},
		}
	}
	e.sim.ResetCounters()
	e.create(mirrorOf("mirror", id))
	e.create(mirrorOf("missing", "00000000-0000-4000-8000-000000000000"))
	e.create(serviceObj("svc", "mirror", "example.com"))

	mirror := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitProgrammed(mirror, "mirror")
	if mirror.Status.ID != id || mirror.Status.ClusterType != "CLUSTER_TYPE_CONTROL_PLANE" ||
		mirror.Status.Endpoints == nil || mirror.Status.Endpoints.ControlPlaneEndpoint == "" {
		t.Errorf("mirror status = %+v", mirror.Status)
	}
	c := e.waitCondition(&konnectv1alpha2.KonnectGatewayControlPlane{}, "missing", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonNotFound, 30*time.Second)
	t.Logf("missing mirror: %s", c.Message)
	svc := &configurationv1alpha1.KongService{}
	e.waitProgrammed(svc, "svc")
	if svc.Status.Konnect.ControlPlaneID != id {
		t.Errorf("service placed in %s, want the mirrored %s", svc.Status.Konnect.ControlPlaneID, id)
	}

	// Deleting the mirror first waits for the service, whose entity is then deleted through it.
	if err := e.c.Delete(e.ctx, mirror); err != nil {
		t.Fatal(err)
	}
	e.waitCondition(&konnectv1alpha2.KonnectGatewayControlPlane{}, "mirror", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonDeleting, 30*time.Second)
	if err := e.c.Delete(e.ctx, svc); err != nil {
		t.Fatal(err)
	}
	e.eventually(30*time.Second, "mirror deleted", func() error {
		if err := e.get(&konnectv1alpha2.KonnectGatewayControlPlane{}, "mirror"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
	if n := len(e.simObjects(konnectsim.KindService)); n != 0 {
		t.Errorf("%d services left in the mirrored control plane", n)
	}
	if _, err := e.sdk().ControlPlanes.GetControlPlane(e.ctx, id); err != nil {
		t.Errorf("the mirrored control plane is gone from Konnect: %v", err)
	}
	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete} {
		if n := count(e.sim, m, konnectsim.PathControlPlanes) + count(e.sim, m, konnectsim.PathControlPlane); n != 0 {
			t.Errorf("%d %s calls on control planes for mirrors, want 0", n, m)
		}
	}
}

// A control plane group's members follow spec.members, wait for members that are not in Konnect yet, and are
// restored after an out-of-band change.
func TestControlPlaneGroupMembers(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: 2 * time.Second})
	one := e.readyControlPlane("one")
	group := controlPlaneObj("group", "one-auth")
	group.Spec.CreateControlPlaneRequest.ClusterType = ptrTo(konnectv1alpha2.ClusterType(kinds.ClusterTypeGroup))
	group.Spec.Members = []corev1.LocalObjectReference{{Name: "one"}, {Name: "two"}}
	e.create(group)

	c := e.waitCondition(group, "group", konnectv1alpha1.ConditionMembersRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if !strings.Contains(c.Message, "two (not found)") {
		t.Errorf("message %q", c.Message)
	}
	e.waitCondition(group, "group", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 5*time.Second)
	if group.Status.ID == "" || group.Status.ClusterType != kinds.ClusterTypeGroup {
		t.Errorf("the group itself should exist in Konnect already: %+v", group.Status)
	}

	e.create(controlPlaneObj("two", "one-auth"))
	two := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitProgrammed(two, "two")
	e.waitProgrammed(group, "group")
	wantMembers := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		e.eventually(30*time.Second, "group members", func() error {
			got := e.sim.GroupMembers(group.Status.ID)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("members %v, want %v", got, want)
			}
			return nil
		})
	}
	wantMembers(one.Status.ID, two.Status.ID)

	e.mutate(group, "group", func() { group.Spec.Members = []corev1.LocalObjectReference{{Name: "two"}} })
	wantMembers(two.Status.ID)

	// Out of band, someone adds "one" back: the next sync period removes it.
	if _, err := e.sdk().ControlPlaneGroups.PutControlPlanesIDGroupMemberships(e.ctx, group.Status.ID, &components.GroupMembership{
		Members: []components.Members{{ID: one.Status.ID}, {ID: two.Status.ID}},
	}); err != nil {
		t.Fatal(err)
	}
	wantMembers(two.Status.ID)
}

// Credentials Secrets become the consumer's credentials in Konnect, follow the Secrets, and go when no longer named.
func TestConsumerCredentials(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: 2 * time.Second})
	e.readyControlPlane("cp")
	secret := func(name, typ string, data map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kinds.CredentialLabel: typ}}, StringData: data}
	}
	e.create(secret("alice-basic", "basic-auth", map[string]string{"username": "alice", "password": "s3cret"}))
	e.create(secret("alice-key", "key-auth", map[string]string{"key": "alice-key-1"}))
	e.create(secret("alice-acl", "acl", map[string]string{"group": "admins"}))
	e.create(&configurationv1.KongConsumer{
		ObjectMeta:  metav1.ObjectMeta{Name: "alice"},
		Username:    "alice",
		Credentials: []string{"alice-basic", "alice-key", "alice-acl", "alice-jwt"},
		Spec:        configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("cp")},
	})

	kc := &configurationv1.KongConsumer{}
	c := e.waitCondition(kc, "alice", konnectv1alpha1.ConditionCredentialsValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if !strings.Contains(c.Message, "alice-jwt not found") {
		t.Errorf("message %q", c.Message)
	}
	e.waitCondition(kc, "alice", konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if kc.Status.Konnect == nil || kc.Status.Konnect.ID == "" {
		t.Fatal("the consumer should be in Konnect while its credentials wait")
	}

	e.create(secret("alice-jwt", "jwt", map[string]string{"key": "alice-issuer"}))
	e.waitProgrammed(kc, "alice")
	credentials := func() map[konnectsim.Kind][]konnectsim.Object {
		out := map[konnectsim.Kind][]konnectsim.Object{}
		for _, k := range []konnectsim.Kind{konnectsim.KindBasicAuth, konnectsim.KindKeyAuth, konnectsim.KindACL, konnectsim.KindJWT, konnectsim.KindHMACAuth} {
			for _, o := range e.sim.ObjectsOf(k) {
				if slices.Contains(o.Tags, entity.UIDTag(kc)) {
					out[k] = append(out[k], o)
				}
			}
		}
		return out
	}
	e.eventually(30*time.Second, "four credentials", func() error {
		got := credentials()
		if len(got[konnectsim.KindBasicAuth]) != 1 || len(got[konnectsim.KindKeyAuth]) != 1 || len(got[konnectsim.KindACL]) != 1 || len(got[konnectsim.KindJWT]) != 1 {
			return fmt.Errorf("credentials %+v", got)
		}
		return nil
	})
	got := credentials()
	basic := got[konnectsim.KindBasicAuth][0]
	if basic.JSON["username"] != "alice" || basic.JSON["password"] == "s3cret" || !slices.Contains(basic.Tags, "k8s-secret:alice-basic") {
		t.Errorf("basic-auth in Konnect = %+v", basic.JSON)
	}
	if got[konnectsim.KindKeyAuth][0].JSON["key"] != "alice-key-1" || got[konnectsim.KindACL][0].JSON["group"] != "admins" {
		t.Errorf("key-auth and acl in Konnect = %+v", got)
	}

	// A new password: the credential is updated in place (Konnect shows only its hash).
	oldHash := basic.JSON["password"]
	s := &corev1.Secret{}
	e.mutate(s, "alice-basic", func() { s.Data["password"] = []byte("n3w") })
	e.eventually(30*time.Second, "password updated", func() error {
		b := credentials()[konnectsim.KindBasicAuth]
		if len(b) != 1 || b[0].ID != basic.ID || b[0].JSON["password"] == oldHash {
			return fmt.Errorf("basic-auth %+v", b)
		}
		return nil
	})

	// Out of band, the key is changed: restored within a sync period. The ACL Secret is dropped: its credential goes.
	if err := e.sim.Edit(got[konnectsim.KindKeyAuth][0].ID, map[string]any{"key": "stolen"}); err != nil {
		t.Fatal(err)
	}
	e.mutate(kc, "alice", func() { kc.Credentials = []string{"alice-basic", "alice-key", "alice-jwt"} })
	e.eventually(30*time.Second, "key restored and acl removed", func() error {
		got := credentials()
		if len(got[konnectsim.KindACL]) != 0 {
			return fmt.Errorf("acl still there")
		}
		if k := got[konnectsim.KindKeyAuth]; len(k) != 1 || k[0].JSON["key"] != "alice-key-1" {
			return fmt.Errorf("key-auth %+v", k)
		}
		return nil
	})

	// The JWT Secret names no secret: Konnect generated one, and the writes since (the consumer's credentials changed)
	// kept it, or every client signing with it would break.
	if j := credentials()[konnectsim.KindJWT]; len(j) != 1 || j[0].JSON["secret"] != got[konnectsim.KindJWT][0].JSON["secret"] {
		t.Errorf("jwt in Konnect %+v, want the secret Konnect generated, %v, kept", j, got[konnectsim.KindJWT][0].JSON["secret"])
	}

	// Deleting the consumer deletes its credentials with it.
	if err := e.c.Delete(e.ctx, kc); err != nil {
		t.Fatal(err)
	}
	e.eventually(30*time.Second, "credentials gone", func() error {
		if got := credentials(); len(got) != 0 {
			return fmt.Errorf("left: %+v", got)
		}
		return nil
	})
}

// Fields Konnect stores differently from how they are declared still compare: a service's url, and the whole set
// of a control plane's labels.
func TestStoredFormsCompare(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: 2 * time.Second})
	cpObj := e.readyControlPlane("cp")
	svc := serviceObj("svc", "cp", "placeholder")
	svc.Spec.URL = ptrTo("https://api.example.com:8443/v1")
	e.create(svc)
	e.waitProgrammed(svc, "svc")
	stored := func() map[string]any {
		s := e.simByUID(konnectsim.KindService, svc.UID)
		if len(s) != 1 {
			t.Fatalf("%d services in Konnect", len(s))
		}
		return s[0].JSON
	}
	if j := stored(); j["protocol"] != "https" || j["host"] != "api.example.com" || fmt.Sprint(j["port"]) != "8443" || j["path"] != "/v1" {
		t.Errorf("service in Konnect = %v", j)
	}
	if err := e.sim.Edit(svc.Status.Konnect.ID, map[string]any{"port": 9999}); err != nil {
		t.Fatal(err)
	}
	e.eventually(30*time.Second, "port restored", func() error {
		if p := fmt.Sprint(stored()["port"]); p != "8443" {
			return fmt.Errorf("port %s", p)
		}
		return nil
	})

	labels := func() map[string]string { return e.simByUID(konnectsim.KindControlPlane, cpObj.UID)[0].Labels }
	e.mutate(cpObj, "cp", func() { cpObj.Spec.CreateControlPlaneRequest.Labels = map[string]string{"team": "a", "env": "prod"} })
	e.eventually(30*time.Second, "label added", func() error {
		if labels()["env"] != "prod" {
			return fmt.Errorf("labels %v", labels())
		}
		return nil
	})
	e.mutate(cpObj, "cp", func() { cpObj.Spec.CreateControlPlaneRequest.Labels = map[string]string{"team": "a"} })
	e.eventually(30*time.Second, "label removed", func() error {
		if _, ok := labels()["env"]; ok {
			return fmt.Errorf("labels %v", labels())
		}
		return nil
	})
	withExtra := map[string]any{}
	for k, v := range labels() {
		withExtra[k] = v
	}
	withExtra["added-in-ui"] = "yes"
	if err := e.sim.Edit(cpObj.Status.ID, map[string]any{"labels": withExtra}); err != nil {
		t.Fatal(err)
	}
	e.eventually(30*time.Second, "out-of-band label removed", func() error {
		if _, ok := labels()["added-in-ui"]; ok {
			return fmt.Errorf("labels %v", labels())
		}
		return nil
	})
}

// TestStaleStatusWriteKeepsTheState: the operator's status write for a mirror is refused as stale, because another
// client wrote the object in between. The reconcile that follows reads a copy without this process's status;
// whatever it writes must carry the ID, organization, server URL and cluster type together with Programmed=True.
func TestStaleStatusWriteKeepsTheState(t *testing.T) {
	var interleaved atomic.Bool
	e := newEnv(t, envOptions{syncPeriod: time.Hour, intercept: &interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			cp, ok := obj.(*konnectv1alpha2.KonnectGatewayControlPlane)
			if ok && sub == "status" && cp.Status.ID != "" && interleaved.CompareAndSwap(false, true) {
				// Another writer changes the object first, so this write is based on a stale copy.
				other := &konnectv1alpha2.KonnectGatewayControlPlane{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
					return err
				}
				other.Labels = map[string]string{"touched-by": "someone-else"}
				if err := c.Update(ctx, other); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}})
	made, err := e.sdk().ControlPlanes.CreateControlPlane(e.ctx, components.CreateControlPlaneRequest{Name: "made-in-the-ui"})
	if err != nil {
		t.Fatal(err)
	}
	id := made.ControlPlane.ID
	e.create(authConfig("auth", e.sim.URL()))
	mirror := controlPlaneObj("mirror", "auth")
	mirror.Spec.CreateControlPlaneRequest = nil
	mirror.Spec.Source = ptrTo(konnectv1alpha2.EntitySourceMirror)
	mirror.Spec.Mirror = &konnectv1alpha2.MirrorSpec{Konnect: konnectv1alpha2.MirrorKonnect{ID: konnectv1alpha2.KonnectIDType(id)}}
	e.create(mirror)
	e.waitProgrammed(mirror, "mirror")
	if !interleaved.Load() {
		t.Fatal("the interleaved write never happened")
	}
	if mirror.Status.ID != id || mirror.Status.OrgID == "" || mirror.Status.ServerURL == "" || mirror.Status.ClusterType == "" {
		t.Errorf("Programmed mirror without its state: %+v", mirror.Status)
	}
}
