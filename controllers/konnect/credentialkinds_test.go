package konnect

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/konnectsim"
)

// credentialCase is one credential kind as these tests write it: its identifying field (value), set on the object
// and on a credential created in Konnect by hand.
type credentialCase struct {
	kind string
	sim  konnectsim.Kind
	// path is the consumer's collection of the kind in Konnect; create the simulator's route of it.
	path, create string
	// field is the field the value goes to; generated is a field Konnect generates when the object leaves it unset
	// ("" when none), which no write of the operator may change.
	field, generated string
	obj              func(refs configurationv1alpha1.KongCredentialRefs, name, value string) client.Object
	// body is the credential as a team creates it in Konnect.
	body func(value string) map[string]any
}

var credentialCases = []credentialCase{
	{kind: "KongCredentialAPIKey", sim: konnectsim.KindKeyAuth, path: "key-auth", create: konnectsim.PathConsumerKeyAuth, field: "key",
		obj: func(refs configurationv1alpha1.KongCredentialRefs, name, v string) client.Object {
			return &configurationv1alpha1.KongCredentialAPIKey{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: configurationv1alpha1.KongCredentialAPIKeySpec{KongCredentialRefs: refs, Key: v}}
		},
		body: func(v string) map[string]any { return map[string]any{"key": v} }},
	{kind: "KongCredentialBasicAuth", sim: konnectsim.KindBasicAuth, path: "basic-auth", create: konnectsim.PathConsumerBasicAuth, field: "username",
		obj: func(refs configurationv1alpha1.KongCredentialRefs, name, v string) client.Object {
			return &configurationv1alpha1.KongCredentialBasicAuth{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: configurationv1alpha1.KongCredentialBasicAuthSpec{KongCredentialRefs: refs, Username: v, Password: "pass"}}
		},
		body: func(v string) map[string]any { return map[string]any{"username": v, "password": "pass"} }},
	{kind: "KongCredentialACL", sim: konnectsim.KindACL, path: "acls", create: konnectsim.PathConsumerACLs, field: "group",
		obj: func(refs configurationv1alpha1.KongCredentialRefs, name, v string) client.Object {
			return &configurationv1alpha1.KongCredentialACL{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: configurationv1alpha1.KongCredentialACLSpec{KongCredentialRefs: refs, Group: v}}
		},
		body: func(v string) map[string]any { return map[string]any{"group": v} }},
	{kind: "KongCredentialJWT", sim: konnectsim.KindJWT, path: "jwt", create: konnectsim.PathConsumerJWT, field: "key", generated: "secret",
		obj: func(refs configurationv1alpha1.KongCredentialRefs, name, v string) client.Object {
			return &configurationv1alpha1.KongCredentialJWT{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: configurationv1alpha1.KongCredentialJWTSpec{KongCredentialRefs: refs, Algorithm: "HS256", Key: ptrTo(v)}}
		},
		body: func(v string) map[string]any { return map[string]any{"key": v, "algorithm": "HS256"} }},
	{kind: "KongCredentialHMAC", sim: konnectsim.KindHMACAuth, path: "hmac-auth", create: konnectsim.PathConsumerHMACAuth, field: "username", generated: "secret",
		obj: func(refs configurationv1alpha1.KongCredentialRefs, name, v string) client.Object {
			return &configurationv1alpha1.KongCredentialHMAC{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: configurationv1alpha1.KongCredentialHMACSpec{KongCredentialRefs: refs, Username: v}}
		},
		body: func(v string) map[string]any { return map[string]any{"username": v} }},
}

// name is the object name of the case's credential named suffix.
func (c credentialCase) name(suffix string) string {
	return strings.ToLower(strings.TrimPrefix(c.kind, "KongCredential")) + "-" + suffix
}

// newObject is an empty object of the case's kind, to read into.
func (c credentialCase) newObject() client.Object {
	return c.obj(configurationv1alpha1.KongCredentialRefs{}, "", "")
}

// credentialConsumer creates the KongConsumer name in control plane cp and returns its Konnect ID once Programmed.
func (e *env) credentialConsumer(name, cp string) string {
	e.t.Helper()
	e.create(consumerObj(name, cp))
	consumer := &configurationv1.KongConsumer{}
	e.waitProgrammed(consumer, name)
	return consumer.Status.Konnect.ID
}

// credentialsOf creates one credential of every kind (named c.name(suffix), value c.name(suffix)+"-v") of the
// consumer and waits until each is Programmed; it returns their Konnect IDs by kind.
func (e *env) credentialsOf(consumer, suffix string) map[string]string {
	e.t.Helper()
	refs := configurationv1alpha1.KongCredentialRefs{ConsumerRef: corev1.LocalObjectReference{Name: consumer}}
	for _, c := range credentialCases {
		e.create(c.obj(refs, c.name(suffix), c.name(suffix)+"-v"))
	}
	ids := map[string]string{}
	for _, c := range credentialCases {
		obj := c.newObject()
		e.waitProgrammed(obj, c.name(suffix))
		ids[c.kind] = e.konnectID(obj)
	}
	return ids
}

// credentialWrites counts the creates and updates of credentials of consumers.
func credentialWrites(sim *konnectsim.Server) (creates, updates int64) {
	for _, c := range credentialCases {
		creates += count(sim, http.MethodPost, c.create)
		updates += count(sim, http.MethodPut, c.create+"/{credentialId}")
	}
	return creates, updates
}

// spec.adopt on every credential kind, as on the other kinds: override takes the consumer's credential over (same
// ID, made equal to the spec, the object's identity tags, nothing created) and deletes it with the object; match
// takes an equal one over unchanged and refuses one that differs, naming the field and writing nothing. A secret
// Konnect generated stays what it was: the spec does not declare it.
func TestCredentialKindsAdopt(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	consumerID := e.credentialConsumer("alice", "cp")
	base := "/v2/control-planes/" + cp.Status.ID + "/core-entities/consumers/" + consumerID + "/"
	refs := func(id string, mode configurationv1alpha1.AdoptMode) configurationv1alpha1.KongCredentialRefs {
		return configurationv1alpha1.KongCredentialRefs{ConsumerRef: corev1.LocalObjectReference{Name: "alice"}, Adopt: adopt(id, mode)}
	}
	type adopted struct{ override, match, other string }
	ids := map[string]adopted{}
	for _, c := range credentialCases {
		ids[c.kind] = adopted{
			override: e.konnectCreate(base+c.path, c.body(c.name("old"))),
			match:    e.konnectCreate(base+c.path, c.body(c.name("same"))),
			other:    e.konnectCreate(base+c.path, c.body(c.name("other"))),
		}
	}
	before := map[string]map[string]any{}
	for _, c := range credentialCases {
		for _, id := range []string{ids[c.kind].override, ids[c.kind].match} {
			before[id] = e.simEntity(c.sim, id)
		}
	}
	creates, _ := credentialWrites(e.sim)
	for _, c := range credentialCases {
		e.create(c.obj(refs(ids[c.kind].override, configurationv1alpha1.AdoptModeOverride), c.name("override"), c.name("new")))
		e.create(c.obj(refs(ids[c.kind].match, configurationv1alpha1.AdoptModeMatch), c.name("match"), c.name("same")))
		e.create(c.obj(refs(ids[c.kind].other, configurationv1alpha1.AdoptModeMatch), c.name("mismatch"), c.name("mine")))
	}
	for _, c := range credentialCases {
		for suffix, want := range map[string]struct{ id, value string }{
			"override": {ids[c.kind].override, c.name("new")}, "match": {ids[c.kind].match, c.name("same")},
		} {
			obj := c.newObject()
			e.waitProgrammed(obj, c.name(suffix))
			if got := e.konnectID(obj); got != want.id {
				t.Errorf("%s %s: status.konnect.id %q, want the adopted ID %s", c.kind, suffix, got, want.id)
			}
			got, _ := e.simObject(c.sim, want.id)
			if got.JSON[c.field] != want.value || !slices.Contains(got.Tags, "k8s-uid:"+string(obj.GetUID())) {
				t.Errorf("%s %s: the adopted credential in Konnect %+v, want %s %s and the object's k8s-uid tag", c.kind, suffix, got.JSON, c.field, want.value)
			}
			if g := c.generated; g != "" && got.JSON[g] != before[want.id][g] {
				t.Errorf("%s %s: adoption changed the %s Konnect generated from %v to %v", c.kind, suffix, g, before[want.id][g], got.JSON[g])
			}
		}
		cond := e.waitCondition(c.newObject(), c.name("mismatch"), konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse,
			konnectv1alpha1.ReasonAdoptionMismatch, 30*time.Second)
		if !strings.Contains(cond.Message, ids[c.kind].other) || !strings.Contains(cond.Message, c.field) {
			t.Errorf("%s: the mismatch does not name the credential %s and the field %s: %s", c.kind, ids[c.kind].other, c.field, cond.Message)
		}
		if got := e.simEntity(c.sim, ids[c.kind].other); got[c.field] != c.name("other") {
			t.Errorf("%s: the credential that did not match was changed: %v", c.kind, got)
		}
	}
	if n, _ := credentialWrites(e.sim); n != creates {
		t.Errorf("%d credentials created, want 0: the existing ones are adopted", n-creates)
	}
	for _, c := range credentialCases {
		obj := c.newObject()
		if err := e.get(obj, c.name("override")); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Delete(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
		e.waitGone(obj, c.name("override"))
		if e.simEntity(c.sim, ids[c.kind].override) != nil {
			t.Errorf("%s: the adopted credential %s is still in Konnect after its object was deleted", c.kind, ids[c.kind].override)
		}
	}
}

// A credential of every kind edited in Konnect is set right, and one deleted in Konnect is put back, within a sync
// period, and so are all of them when their consumer is deleted in Konnect; a change of the spec reaches Konnect at
// once. A secret Konnect generated survives the correction or change of another field.
func TestCredentialKindsDrift(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	consumerID := e.credentialConsumer("alice", "cp")
	ids := e.credentialsOf("alice", "c")
	secrets := map[string]any{}
	for _, c := range credentialCases {
		if c.generated != "" {
			secrets[c.kind] = e.simEntity(c.sim, ids[c.kind])[c.generated]
		}
		if err := e.sim.Edit(ids[c.kind], map[string]any{c.field: "edited-" + c.name("c")}); err != nil {
			t.Fatal(err)
		}
	}
	inKonnect := func() error {
		for _, c := range credentialCases {
			got := e.simEntity(c.sim, ids[c.kind])
			if got[c.field] != c.name("c")+"-v" || !strings.Contains(fmt.Sprint(got["tags"]), "k8s-kind:"+c.kind) {
				return fmt.Errorf("%s in Konnect: %s %v, tags %v", c.kind, c.field, got[c.field], got["tags"])
			}
		}
		return nil
	}
	e.eventually(3*period+10*time.Second, "edits in Konnect overwritten", inKonnect)
	for _, c := range credentialCases {
		if c.generated != "" && e.simEntity(c.sim, ids[c.kind])[c.generated] != secrets[c.kind] {
			t.Errorf("%s: correcting %s changed the %s Konnect generated", c.kind, c.field, c.generated)
		}
		if err := e.sim.Remove(ids[c.kind]); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(3*period+10*time.Second, "credentials deleted in Konnect put back", inKonnect)
	for _, c := range credentialCases {
		if n := len(e.simObjects(c.sim)); n != 1 {
			t.Errorf("%s: %d credentials of the kind in Konnect, want 1", c.kind, n)
		}
		if c.generated != "" {
			secrets[c.kind] = e.simEntity(c.sim, ids[c.kind])[c.generated]
		}
		// A change of the spec reaches Konnect at once, the generated secret with it unchanged.
		obj := c.newObject()
		if err := e.get(obj, c.name("c")); err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`{"spec":{%q:%q}}`, c.field, c.name("c")+"-changed")
		if err := e.c.Patch(e.ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(10*time.Second, "spec changes in Konnect", func() error {
		for _, c := range credentialCases {
			if got := e.simEntity(c.sim, ids[c.kind]); got[c.field] != c.name("c")+"-changed" {
				return fmt.Errorf("%s in Konnect: %s %v", c.kind, c.field, got[c.field])
			}
		}
		return nil
	})
	for _, c := range credentialCases {
		if c.generated != "" && e.simEntity(c.sim, ids[c.kind])[c.generated] != secrets[c.kind] {
			t.Errorf("%s: a change of %s changed the %s Konnect generated", c.kind, c.field, c.generated)
		}
	}
	// The consumer deleted in Konnect, and its credentials with it: all are put back.
	if err := e.sim.Remove(consumerID); err != nil {
		t.Fatal(err)
	}
	e.eventually(3*period+10*time.Second, "the consumer deleted in Konnect put back with its credentials", func() error {
		for _, c := range credentialCases {
			if got := e.simEntity(c.sim, ids[c.kind]); got[c.field] != c.name("c")+"-changed" {
				return fmt.Errorf("%s in Konnect: %v", c.kind, got)
			}
		}
		return nil
	})
}

// The hand-over to tag scheme v2 re-tags the credentials of every kind in place (same IDs, nothing created, one
// update each) without changing them otherwise: a basic-auth password (Konnect shows only its hash) and a secret
// Konnect generated stay what they were. The old version, still running, keeps the new tags.
func TestHandoffRetagsCredentials(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Second, leaderElect: true})
	e.readyControlPlane("cp")
	e.credentialConsumer("alice", "cp")
	ids := e.credentialsOf("alice", "c")
	before := map[string]map[string]any{}
	for _, c := range credentialCases {
		before[c.kind] = e.simEntity(c.sim, ids[c.kind])
	}
	creates, updates := credentialWrites(e.sim)

	target := e.requestHandoff("konnect-operator.v1.3.0")
	stopNew := e.runOperator(envOptions{syncPeriod: time.Second, leaderElect: true, tagScheme: entity.TagSchemeV2, handoff: target})
	defer stopNew()
	if answer := e.waitAnswer(target.Name, 30*time.Second); answer["completed"] != true {
		t.Fatalf("hand-over answered %v, want completed", answer)
	}
	retagged := func() error {
		for _, c := range credentialCases {
			got := e.simEntity(c.sim, ids[c.kind])
			tags, _ := got["tags"].([]any)
			var strs []string
			for _, tag := range tags {
				strs = append(strs, fmt.Sprint(tag))
			}
			if got == nil || entity.TagValue(tags, entity.TagGroup) == "" || entity.TagValue(tags, entity.TagVersion) == "" {
				return fmt.Errorf("%s %s in Konnect: tags %v, want scheme v2's", c.kind, ids[c.kind], strs)
			}
			for k, v := range before[c.kind] {
				if k != "tags" && fmt.Sprint(got[k]) != fmt.Sprint(v) {
					return fmt.Errorf("%s %s in Konnect: %s %v, was %v: re-tagging changes only the tags", c.kind, ids[c.kind], k, got[k], v)
				}
			}
		}
		return nil
	}
	if err := retagged(); err != nil {
		t.Error(err)
	}
	c, u := credentialWrites(e.sim)
	if c != creates || u-updates != int64(len(credentialCases)) {
		t.Errorf("the hand-over created %d credentials and updated %d, want 0 and %d", c-creates, u-updates, len(credentialCases))
	}
	// Two drift scans of the old version (each lists the credentials) write nothing and keep the v2 tags.
	lists := count(e.sim, http.MethodGet, konnectsim.PathConsumerKeyAuth)
	e.eventually(20*time.Second, "two drift scans of the old version", func() error {
		if n := count(e.sim, http.MethodGet, konnectsim.PathConsumerKeyAuth) - lists; n < 2 {
			return fmt.Errorf("%d key-auth lists since the hand-over", n)
		}
		return nil
	})
	if _, after := credentialWrites(e.sim); after != u {
		t.Errorf("the old version made %d credential updates after the hand-over, want none", after-u)
	}
	if err := retagged(); err != nil {
		t.Errorf("after the old version's drift scans: %v", err)
	}
}

// Deleting the KongConsumer before its credentials: Konnect deletes the consumer's credentials with it; each
// credential says its consumer is gone; deleting the credentials then (or at once) leaves nothing stuck on a
// finalizer (Konnect's 404 for a credential already gone is success) and nothing in Konnect. A consumer of that
// name created again gets the credentials again.
func TestCredentialConsumerDeletedFirst(t *testing.T) {
	for _, tc := range []struct {
		name     string
		together bool
	}{{"credentials later", false}, {"credentials at once", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.readyControlPlane("cp")
			e.credentialConsumer("alice", "cp")
			e.credentialsOf("alice", "c")
			consumer := &configurationv1.KongConsumer{}
			if err := e.get(consumer, "alice"); err != nil {
				t.Fatal(err)
			}
			if err := e.c.Delete(e.ctx, consumer); err != nil {
				t.Fatal(err)
			}
			if tc.together {
				e.deleteCredentials("c")
				e.credentialsGone("c")
				return
			}
			e.waitGone(consumer, "alice")
			if n := len(e.simObjects(konnectsim.KindConsumer)); n != 0 {
				t.Fatalf("%d consumers in Konnect after the KongConsumer was deleted", n)
			}
			for _, c := range credentialCases {
				e.eventually(30*time.Second, c.kind+" says its consumer is gone", func() error {
					for typ, reason := range map[string]string{konnectv1alpha1.ConditionKongConsumerRefValid: "",
						konnectv1alpha1.ConditionProgrammed: konnectv1alpha1.ReasonInvalidReference} {
						cond, err := e.condition(c.newObject(), c.name("c"), typ)
						if err != nil {
							return err
						}
						if cond.Status != metav1.ConditionFalse || (reason != "" && cond.Reason != reason) ||
							!strings.Contains(cond.Message, "KongConsumer "+e.ns+"/alice not found") || !strings.Contains(cond.Message, "deleted with its consumer") {
							return fmt.Errorf("%s=%s %s: %q, want False saying that KongConsumer %s/alice is not found and the credential went with it",
								typ, cond.Status, cond.Reason, cond.Message, e.ns)
						}
					}
					return nil
				})
				if n := len(e.simObjects(c.sim)); n != 0 {
					t.Errorf("%s: %d credentials in Konnect after their consumer was deleted", c.kind, n)
				}
			}
			// The consumer again: the credentials are created again, under the new consumer.
			newID := e.credentialConsumer("alice", "cp")
			for _, c := range credentialCases {
				obj := c.newObject()
				e.waitProgrammed(obj, c.name("c"))
				if got := e.simEntity(c.sim, e.konnectID(obj)); fmt.Sprint(got["consumer"]) != fmt.Sprint(map[string]any{"id": newID}) {
					t.Errorf("%s: in Konnect %v, want a credential of the new consumer %s", c.kind, got, newID)
				}
			}
			if err := e.get(consumer, "alice"); err != nil {
				t.Fatal(err)
			}
			if err := e.c.Delete(e.ctx, consumer); err != nil {
				t.Fatal(err)
			}
			e.waitGone(consumer, "alice")
			e.deleteCredentials("c")
			e.credentialsGone("c")
		})
	}
}

// deleteCredentials deletes the credential of every kind named c.name(suffix).
func (e *env) deleteCredentials(suffix string) {
	e.t.Helper()
	for _, c := range credentialCases {
		obj := c.newObject()
		if err := e.get(obj, c.name(suffix)); err != nil {
			e.t.Fatal(err)
		}
		if err := e.c.Delete(e.ctx, obj); err != nil {
			e.t.Fatal(err)
		}
	}
}

// credentialsGone waits until the credentials named c.name(suffix) and the consumer alice are gone, and checks that
// Konnect holds no consumer or credential of the test.
func (e *env) credentialsGone(suffix string) {
	e.t.Helper()
	for _, c := range credentialCases {
		e.waitGone(c.newObject(), c.name(suffix))
	}
	e.waitGone(&configurationv1.KongConsumer{}, "alice")
	for _, kind := range []konnectsim.Kind{konnectsim.KindConsumer, konnectsim.KindKeyAuth, konnectsim.KindBasicAuth,
		konnectsim.KindACL, konnectsim.KindJWT, konnectsim.KindHMACAuth} {
		if n := len(e.simObjects(kind)); n != 0 {
			e.t.Errorf("%d %s left in Konnect", n, kind)
		}
	}
}
