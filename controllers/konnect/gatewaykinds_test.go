package konnect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
)

// The kinds of upstreams, TLS material, keys and vaults: each ends Programmed with its Konnect ID, changes reach
// Konnect, drift is overwritten, and deleting in any order leaves nothing behind.

func upstreamObj(name, cp string) *configurationv1alpha1.KongUpstream {
	return &configurationv1alpha1.KongUpstream{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongUpstreamSpec{
		ControlPlaneRef: cpRef(cp), KongUpstreamAPISpec: configurationv1alpha1.KongUpstreamAPISpec{Name: name + ".internal"},
	}}
}

func targetObj(name, upstream, addr string) *configurationv1alpha1.KongTarget {
	return &configurationv1alpha1.KongTarget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongTargetSpec{
		UpstreamRef: configurationv1alpha1.ObjectNameRef{Name: upstream}, KongTargetAPISpec: configurationv1alpha1.KongTargetAPISpec{Target: addr, Weight: 100},
	}}
}

func certificateObj(name, cp, host string) *configurationv1alpha1.KongCertificate {
	cert, key := konnectsim.TestCertificate(host, false)
	return &configurationv1alpha1.KongCertificate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongCertificateSpec{
		ControlPlaneRef: cpRef(cp), KongCertificateAPISpec: configurationv1alpha1.KongCertificateAPISpec{Cert: cert, Key: key},
	}}
}

// tlsSecret is a kubernetes.io/tls Secret with a new certificate for host.
func tlsSecret(name, host string) *corev1.Secret {
	cert, key := konnectsim.TestCertificate(host, false)
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(cert), "tls.key": []byte(key)}}
}

func certificateFromSecret(name, cp, secret string) *configurationv1alpha1.KongCertificate {
	return &configurationv1alpha1.KongCertificate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongCertificateSpec{
		ControlPlaneRef: cpRef(cp), Type: ptrTo(configurationv1alpha1.CertificateSourceSecretRef),
		SecretRef: &configurationv1alpha1.SecretNamespacedRef{Name: secret},
	}}
}

func caCertificateObj(name, cp string) *configurationv1alpha1.KongCACertificate {
	cert, _ := konnectsim.TestCertificate(name, true)
	return &configurationv1alpha1.KongCACertificate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongCACertificateSpec{
		ControlPlaneRef: cpRef(cp), KongCACertificateAPISpec: configurationv1alpha1.KongCACertificateAPISpec{Cert: cert},
	}}
}

func sniObj(name, certificate, host string) *configurationv1alpha1.KongSNI {
	return &configurationv1alpha1.KongSNI{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongSNISpec{
		CertificateRef: configurationv1alpha1.ObjectNameRef{Name: certificate}, KongSNIAPISpec: configurationv1alpha1.KongSNIAPISpec{Name: host},
	}}
}

func dpCertificateObj(name, cp string) *configurationv1alpha1.KongDataPlaneClientCertificate {
	cert, _ := konnectsim.TestCertificate(name, false)
	return &configurationv1alpha1.KongDataPlaneClientCertificate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongDataPlaneClientCertificateSpec{
		ControlPlaneRef: cpRef(cp), KongDataPlaneClientCertificateAPISpec: configurationv1alpha1.KongDataPlaneClientCertificateAPISpec{Cert: cert},
	}}
}

func keySetObj(name, cp string) *configurationv1alpha1.KongKeySet {
	return &configurationv1alpha1.KongKeySet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongKeySetSpec{
		ControlPlaneRef: cpRef(cp), KongKeySetAPISpec: configurationv1alpha1.KongKeySetAPISpec{Name: name},
	}}
}

// keyObj is a PEM key of control plane cp, in the KongKeySet set unless it is "".
func keyObj(name, cp, set string) *configurationv1alpha1.KongKey {
	priv, pub := konnectsim.TestKeyPair()
	k := &configurationv1alpha1.KongKey{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongKeySpec{
		ControlPlaneRef: cpRef(cp),
		KongKeyAPISpec:  configurationv1alpha1.KongKeyAPISpec{KID: name, Name: ptrTo(name), PEM: &configurationv1alpha1.PEMKeyPair{PrivateKey: priv, PublicKey: pub}},
	}}
	if set != "" {
		k.Spec.KeySetRef = &configurationv1alpha1.KeySetRef{Type: configurationv1alpha1.KeySetRefNamespacedRef, NamespacedRef: &configurationv1alpha1.ObjectNameRef{Name: set}}
	}
	return k
}

// vaultObj is a cluster-scoped env vault of the control plane cp in e's namespace, named after the namespace (so
// tests do not share it); it is deleted when the test ends.
func (e *env) vaultObj(prefix, cp string) *configurationv1alpha1.KongVault {
	v := &configurationv1alpha1.KongVault{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + prefix}, Spec: configurationv1alpha1.KongVaultSpec{
		Backend: "env", Prefix: prefix, Config: apiextensionsv1.JSON{Raw: []byte(`{"prefix":"app_"}`)},
		ControlPlaneRef: &configurationv1alpha1.ClusterControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
			KonnectNamespacedRef: &configurationv1alpha1.ClusterKonnectNamespacedRef{Name: cp, Namespace: e.ns}},
	}}
	e.t.Cleanup(func() { e.forget(&configurationv1alpha1.KongVault{ObjectMeta: metav1.ObjectMeta{Name: v.Name}}) })
	return v
}

// forget deletes a cluster-scoped object a test left, dropping its finalizers (its operator may be gone). It runs
// as a Cleanup, when the test's context is already canceled, so it has a context of its own.
func (e *env) forget(obj client.Object) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 30*time.Second)
	defer cancel()
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return
	}
	obj.SetFinalizers(nil)
	_ = e.c.Update(ctx, obj)
	_ = e.c.Delete(ctx, obj)
}

// gatewayObjects declares one of each kind in control plane cp: upstream u with target t, certificate cert (inline)
// with SNI sni, certificate cert-secret (from a Secret), CA certificate ca, data plane certificate dp, key set ks
// with key k, key k-free in no set, and a vault. It returns them by name.
func (e *env) gatewayObjects(cp string) map[string]client.Object {
	e.create(tlsSecret("tls", "secret.example.com"))
	// The vault is cluster-scoped: a grant in the control plane's namespace lets it reference the control plane.
	e.create(grantObj("vaults-to-"+cp, "KongVault", ""))
	objs := map[string]client.Object{
		"u": upstreamObj("u", cp), "t": targetObj("t", "u", "10.0.0.1:8080"),
		"cert": certificateObj("cert", cp, "example.com"), "sni": sniObj("sni", "cert", "api.example.com"),
		"cert-secret": certificateFromSecret("cert-secret", cp, "tls"), "ca": caCertificateObj("ca", cp),
		"dp": dpCertificateObj("dp", cp), "ks": keySetObj("ks", cp), "k": keyObj("k", cp, "ks"), "k-free": keyObj("k-free", cp, ""),
		"vault": e.vaultObj("env-vault", cp),
	}
	for _, o := range objs {
		e.create(o)
	}
	return objs
}

// gatewayKinds are the simulator's kinds of the objects of gatewayObjects, by name.
var gatewayKinds = map[string]konnectsim.Kind{
	"u": konnectsim.KindUpstream, "t": konnectsim.KindTarget, "cert": konnectsim.KindCertificate, "sni": konnectsim.KindSNI,
	"cert-secret": konnectsim.KindCertificate, "ca": konnectsim.KindCACertificate, "dp": konnectsim.KindDPCertificate,
	"ks": konnectsim.KindKeySet, "k": konnectsim.KindKey, "k-free": konnectsim.KindKey, "vault": konnectsim.KindVault,
}

// konnectID is the status.konnect.id of obj (read fresh).
func (e *env) konnectID(obj client.Object) string {
	e.t.Helper()
	c, err := e.condition(obj, obj.GetName(), konnectv1alpha1.ConditionProgrammed)
	if err != nil || c.Status != metav1.ConditionTrue {
		e.t.Fatalf("%s is not Programmed: %v %v", obj.GetName(), c, err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		e.t.Fatal(err)
	}
	id, _, _ := unstructured.NestedString(u, "status", "konnect", "id")
	return id
}

// simEntity is the simulator's entity with ID id (nil when there is none).
func (e *env) simEntity(kind konnectsim.Kind, id string) map[string]any {
	for _, o := range e.sim.ObjectsOf(kind) {
		if o.ID == id {
			return o.JSON
		}
	}
	return nil
}

// Every kind ends Programmed with its Konnect ID, and its entity is in Konnect as declared (a target in its
// upstream, an SNI of its certificate, a key in its set, PEM read from the Secret).
func TestGatewayKindsProgrammed(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	objs := e.gatewayObjects("cp")
	ids := map[string]string{}
	for name, o := range objs {
		e.waitProgrammed(o, o.GetName())
		ids[name] = e.konnectID(o)
		if e.simEntity(gatewayKinds[name], ids[name]) == nil {
			t.Errorf("%s: no %s %s in Konnect", name, gatewayKinds[name], ids[name])
		}
	}
	parent := func(name, field string) any {
		ref, _ := e.simEntity(gatewayKinds[name], ids[name])[field].(map[string]any)
		return ref["id"]
	}
	if parent("t", "upstream") != ids["u"] || parent("sni", "certificate") != ids["cert"] || parent("k", "set") != ids["ks"] {
		t.Errorf("parents in Konnect: target's upstream %v, SNI's certificate %v, key's set %v; want %s, %s, %s",
			parent("t", "upstream"), parent("sni", "certificate"), parent("k", "set"), ids["u"], ids["cert"], ids["ks"])
	}
	secret := &corev1.Secret{}
	if err := e.get(secret, "tls"); err != nil {
		t.Fatal(err)
	}
	if got := e.simEntity(konnectsim.KindCertificate, ids["cert-secret"])["cert"]; got != string(secret.Data["tls.crt"]) {
		t.Errorf("certificate from the Secret: Konnect has %.40q..., want the Secret's tls.crt", got)
	}
	cs := &configurationv1alpha1.KongCertificate{}
	if err := e.get(cs, "cert-secret"); err != nil {
		t.Fatal(err)
	}
	if h := cs.Status.ObservedHash; h == "" {
		t.Errorf("certificate from the Secret has no observedHash")
	}
	e.noKeyMaterialShown(string(secret.Data["tls.key"]), objs)
}

// noKeyMaterialShown checks that no private key (key, and no PEM private key at all) is in the status of objs or
// in an event of the namespace.
func (e *env) noKeyMaterialShown(key string, objs map[string]client.Object) {
	e.t.Helper()
	shown := func(what, text string) {
		if strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, strings.TrimSpace(key)) {
			e.t.Errorf("%s shows private key material", what)
		}
	}
	for name, o := range objs {
		if err := e.get(o, o.GetName()); err != nil {
			e.t.Fatal(err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			e.t.Fatal(err)
		}
		status, _ := json.Marshal(u["status"])
		shown(name+"'s status", string(status))
	}
	events := &eventsv1.EventList{}
	if err := e.c.List(e.ctx, events, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range events.Items {
		shown("event "+ev.Reason, ev.Note)
	}
}

// Changes reach Konnect at once (an upstream's slots, a target's weight, an SNI's name, a key set's and a key's name,
// new PEM of a certificate and a CA certificate, a vault's config, a rotated certificate in its Secret); edits made
// in Konnect are overwritten within a sync period.
func TestGatewayKindsUpdateAndDrift(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	objs := e.gatewayObjects("cp")
	ids := map[string]string{}
	for name, o := range objs {
		e.waitProgrammed(o, o.GetName())
		ids[name] = e.konnectID(o)
	}
	target, sni, vault := &configurationv1alpha1.KongTarget{}, &configurationv1alpha1.KongSNI{}, &configurationv1alpha1.KongVault{}
	e.mutate(target, "t", func() { target.Spec.Weight = 7 })
	e.mutate(sni, "sni", func() { sni.Spec.Name = "www.example.com" })
	e.mutate(vault, objs["vault"].GetName(), func() { vault.Spec.Config.Raw = []byte(`{"prefix":"other_"}`) })
	up, ks, key, ca, cert := &configurationv1alpha1.KongUpstream{}, &configurationv1alpha1.KongKeySet{}, &configurationv1alpha1.KongKey{},
		&configurationv1alpha1.KongCACertificate{}, &configurationv1alpha1.KongCertificate{}
	newCA, newCert := caCertificateObj("ca2", "cp").Spec.Cert, certificateObj("c2", "cp", "new.example.com").Spec
	e.mutate(up, "u", func() { up.Spec.Slots = ptrTo(int64(100)) })
	e.mutate(ks, "ks", func() { ks.Spec.Name = "ks-renamed" })
	e.mutate(key, "k", func() { key.Spec.Name = ptrTo("k-renamed") })
	e.mutate(ca, "ca", func() { ca.Spec.Cert = newCA })
	e.mutate(cert, "cert", func() { cert.Spec.Cert, cert.Spec.Key = newCert.Cert, newCert.Key })
	rotated := tlsSecret("tls", "rotated.example.com")
	secret := &corev1.Secret{}
	e.mutate(secret, "tls", func() { secret.Data = rotated.Data })
	want := map[string][2]any{
		"t": {"weight", int64(7)}, "sni": {"name", "www.example.com"}, "cert-secret": {"cert", string(rotated.Data["tls.crt"])},
		"u": {"slots", int64(100)}, "ks": {"name", "ks-renamed"}, "k": {"name", "k-renamed"}, "ca": {"cert", newCA},
		"cert": {"key", newCert.Key},
	}
	e.eventually(10*time.Second, "changes in Konnect", func() error {
		for name, w := range want {
			if got := e.simEntity(gatewayKinds[name], ids[name])[w[0].(string)]; got != w[1] {
				return fmt.Errorf("%s %s: %.60v", name, w[0], got)
			}
		}
		if c, _ := e.simEntity(konnectsim.KindVault, ids["vault"])["config"].(map[string]any); c["prefix"] != "other_" {
			return fmt.Errorf("vault config %v", c)
		}
		return nil
	})

	// Out-of-band edits of declared fields, and an entity deleted in Konnect, are set right within a sync period.
	edits := map[string]map[string]any{
		"u": {"name": "edited.internal"}, "t": {"weight": 99}, "ks": {"name": "renamed"}, "k-free": {"kid": "other"},
		"ca": {"tags": []any{"x"}}, "vault": {"config": map[string]any{"prefix": "edited_"}}, "sni": {"name": "edited.example.com"},
		"cert": {"tags": []any{"x"}},
	}
	for name, patch := range edits {
		if err := e.sim.Edit(ids[name], patch); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.sim.Remove(ids["dp"]); err != nil {
		t.Fatal(err)
	}
	e.eventually(3*period+10*time.Second, "drift overwritten", func() error {
		for name, patch := range edits {
			got := e.simEntity(gatewayKinds[name], ids[name])
			for k, v := range patch {
				if fmt.Sprint(got[k]) == fmt.Sprint(v) {
					return fmt.Errorf("%s %s still %v", name, k, v)
				}
			}
		}
		dp := &configurationv1alpha1.KongDataPlaneClientCertificate{}
		if err := e.get(dp, "dp"); err != nil || dp.Status.Konnect == nil || e.simEntity(konnectsim.KindDPCertificate, dp.Status.Konnect.ID) == nil {
			return fmt.Errorf("data plane certificate not in Konnect again (get: %w)", err)
		}
		return nil
	})
}

// A missing or unprogrammed reference is reported by name on a failure condition, and nothing is sent to Konnect.
func TestGatewayReferencesCheckedFirst(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(targetObj("t", "no-upstream", "10.0.0.1"))
	e.create(sniObj("sni", "no-certificate", "api.example.com"))
	e.create(keyObj("k", "cp", "no-key-set"))
	e.create(certificateFromSecret("cert", "cp", "no-secret"))
	e.create(upstreamObj("u", "no-cp"))
	for _, c := range []struct {
		obj       client.Object
		condition string
		names     string
	}{
		{&configurationv1alpha1.KongTarget{}, konnectv1alpha1.ConditionKongUpstreamRefValid, "KongUpstream " + e.ns + "/no-upstream not found"},
		{&configurationv1alpha1.KongSNI{}, konnectv1alpha1.ConditionKongCertificateRefValid, "KongCertificate " + e.ns + "/no-certificate not found"},
		{&configurationv1alpha1.KongKey{}, konnectv1alpha1.ConditionKeySetRefValid, "KongKeySet " + e.ns + "/no-key-set not found"},
		{&configurationv1alpha1.KongCertificate{}, konnectv1alpha1.ConditionSecretRefValid, "Secret " + e.ns + "/no-secret not found"},
		{&configurationv1alpha1.KongUpstream{}, konnectv1alpha1.ConditionControlPlaneRefValid, "KonnectGatewayControlPlane " + e.ns + "/no-cp not found"},
	} {
		name := map[string]string{"*v1alpha1.KongTarget": "t", "*v1alpha1.KongSNI": "sni", "*v1alpha1.KongKey": "k", "*v1alpha1.KongCertificate": "cert", "*v1alpha1.KongUpstream": "u"}[fmt.Sprintf("%T", c.obj)]
		got := e.waitCondition(c.obj, name, c.condition, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
		if got.Message != c.names {
			t.Errorf("%s %s: message %q, want %q", name, c.condition, got.Message, c.names)
		}
		e.waitCondition(c.obj, name, konnectv1alpha1.ConditionProgrammed, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 5*time.Second)
	}
	for _, path := range []string{konnectsim.PathUpstreamTargets, konnectsim.PathSNIs, konnectsim.PathKeys, konnectsim.PathCertificates, konnectsim.PathUpstreams} {
		if n := count(e.sim, http.MethodPost, path); n != 0 {
			t.Errorf("%d POST %s with an invalid reference, want 0", n, path)
		}
	}
	// Once the reference is there, the object follows.
	e.create(upstreamObj("no-upstream", "cp"))
	e.waitProgrammed(&configurationv1alpha1.KongTarget{}, "t")
}

// gatewayDeletionObjects are the names and kinds of the objects TestGatewayDeletionOrders deletes.
var gatewayDeletionObjects = map[string]client.Object{
	"u": &configurationv1alpha1.KongUpstream{}, "t": &configurationv1alpha1.KongTarget{},
	"cert": &configurationv1alpha1.KongCertificate{}, "sni": &configurationv1alpha1.KongSNI{},
	"ks": &configurationv1alpha1.KongKeySet{}, "k": &configurationv1alpha1.KongKey{},
	"ca": &configurationv1alpha1.KongCACertificate{}, "dp": &configurationv1alpha1.KongDataPlaneClientCertificate{},
	"vault": &configurationv1alpha1.KongVault{}, "cp": &konnectv1alpha2.KonnectGatewayControlPlane{},
	"cp-auth": &konnectv1alpha1.KonnectAPIAuthConfiguration{},
}

// Deleting in any order (parents first, children first, the control plane or the auth configuration first) ends
// with nothing in Konnect and nothing stuck on a finalizer.
func TestGatewayDeletionOrders(t *testing.T) {
	children := []string{"t", "sni", "k"}
	parents := []string{"u", "cert", "ks"}
	others := []string{"ca", "dp", "vault"}
	for _, tc := range []struct {
		name  string
		order []string
	}{
		{"parents first", concat(parents, children, others, []string{"cp", "cp-auth"})},
		{"children first", concat(children, parents, others, []string{"cp", "cp-auth"})},
		{"control plane first", concat([]string{"cp"}, parents, children, others, []string{"cp-auth"})},
		{"auth config first", concat([]string{"cp-auth"}, parents, children, others, []string{"cp"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.readyControlPlane("cp")
			created := e.gatewayObjects("cp")
			names := map[string]string{"cp": "cp", "cp-auth": "cp-auth"}
			for name, o := range created {
				names[name] = o.GetName()
				if gatewayDeletionObjects[name] != nil {
					e.waitProgrammed(o, o.GetName())
				}
			}
			e.deleteInOrder(tc.order, names)
			for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindUpstream, konnectsim.KindTarget,
				konnectsim.KindCertificate, konnectsim.KindSNI, konnectsim.KindKeySet, konnectsim.KindKey, konnectsim.KindCACertificate, konnectsim.KindVault} {
				if got := e.simObjects(kind); len(got) != 0 {
					t.Errorf("%d %s left in Konnect", len(got), kind)
				}
			}
			if n := len(e.sim.ObjectsOf(konnectsim.KindDPCertificate)); n != 0 {
				t.Errorf("%d data plane certificates left in Konnect", n)
			}
		})
	}
}

// deleteInOrder deletes the objects named in order (gatewayDeletionObjects' keys; names maps them to object names),
// checks that each entity goes with its object while the control plane is there, and waits until every object is
// gone.
func (e *env) deleteInOrder(order []string, names map[string]string) {
	e.t.Helper()
	cpDeleted := false
	for _, what := range order {
		obj := gatewayDeletionObjects[what].DeepCopyObject().(client.Object)
		if err := e.get(obj, names[what]); err != nil {
			e.t.Fatal(err)
		}
		if err := e.c.Delete(e.ctx, obj); err != nil {
			e.t.Fatalf("deleting %s: %v", what, err)
		}
		cpDeleted = cpDeleted || what == "cp" || what == "cp-auth"
		if kind, ok := gatewayKinds[what]; ok && !cpDeleted {
			e.waitGone(obj, names[what])
			if kind != konnectsim.KindDPCertificate && len(e.simByUID(kind, obj.GetUID())) != 0 {
				e.t.Errorf("%s is gone but its %s is still in Konnect", what, kind)
			}
		}
	}
	e.eventually(30*time.Second, "every object gone", func() error {
		for _, what := range order {
			obj := gatewayDeletionObjects[what].DeepCopyObject().(client.Object)
			if err := e.get(obj, names[what]); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: %w", what, err)
			} else if err == nil {
				return fmt.Errorf("%s is still there (finalizers %v)", what, obj.GetFinalizers())
			}
		}
		return nil
	})
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Steady state with every kind of upstreams, TLS material, keys and vaults in one control plane: per sync period, one
// list per kind (each a single page here), the control planes' list and the auth configuration's token check, and
// no writes, whatever the number of objects.
func TestSteadyStateCallsWithGatewayKinds(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	objs := e.gatewayObjects("cp")
	for i := range 3 {
		for _, o := range []client.Object{
			upstreamObj(fmt.Sprintf("u-%d", i), "cp"), targetObj(fmt.Sprintf("t-%d", i), "u", fmt.Sprintf("10.0.1.%d:80", i)),
			sniObj(fmt.Sprintf("sni-%d", i), "cert", fmt.Sprintf("host-%d.example.com", i)), keyObj(fmt.Sprintf("k-%d", i), "cp", "ks"),
		} {
			e.create(o)
			objs[o.GetName()] = o
		}
	}
	for _, o := range objs {
		e.waitProgrammed(o, o.GetName())
	}
	// The window is counted in scans of the control planes (one object, so one list per period whatever the other
	// kinds do).
	scans := func() int64 { return count(e.sim, http.MethodGet, konnectsim.PathControlPlanes) }
	start := scans()
	e.eventually(5*period, "two scans", func() error {
		if scans() < start+2 {
			return fmt.Errorf("%d scans", scans()-start)
		}
		return nil
	})
	before, first := e.sim.Counters(), scans()
	e.eventually(6*period, "three measured scans", func() error {
		if scans() < first+3 {
			return fmt.Errorf("%d scans", scans()-first)
		}
		return nil
	})
	after := e.sim.Counters()
	// Each list (upstreams, targets, certificates, CA certificates, SNIs, data plane certificates, key sets, keys,
	// vaults; the control planes; the token check) runs once a period on a timer of its own, so a window of 3
	// control-plane scans holds 3 or 4 of each: what matters is that none runs per entity (23 objects here).
	const window = 3
	var total int64
	for k, v := range after {
		d := v - before[k]
		if d <= 0 {
			continue
		}
		total += d
		t.Logf("%-100s %d", k, d)
		switch {
		case k[:3] == "PUT" || k[:4] == "POST" || k[:6] == "DELETE":
			t.Errorf("%d %s in steady state", d, k)
		case d > window+1:
			t.Errorf("%d %s in %d sync periods, want at most %d: once a period, not per entity", d, k, window, window+1)
		}
	}
	t.Logf("%d Konnect calls in %d sync periods (%.1f per period) for 1 control plane and %d objects of 9 kinds", total, window, float64(total)/window, len(objs))
}

// Kong's sample manifests for these kinds apply unchanged and end Programmed, each with its entity in Konnect.
func TestKongGatewayKindsManifestsApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	t.Cleanup(func() { e.forget(&configurationv1alpha1.KongVault{ObjectMeta: metav1.ObjectMeta{Name: "env-vault-1"}}) })
	e.waitAllProgrammed(e.applyManifests("kong-gateway-kinds.yaml"))
	for kind, want := range map[konnectsim.Kind]int{
		konnectsim.KindUpstream: 1, konnectsim.KindTarget: 1, konnectsim.KindCertificate: 2, konnectsim.KindCACertificate: 2,
		konnectsim.KindSNI: 1, konnectsim.KindKeySet: 1, konnectsim.KindKey: 2, konnectsim.KindVault: 1, konnectsim.KindDPCertificate: 1,
	} {
		if got := len(e.sim.ObjectsOf(kind)); got != want {
			t.Errorf("%d %s in Konnect, want %d", got, kind, want)
		}
	}
}

// 5xx answers and a lost response are retried with backoff, never taken as a verdict: a target is created exactly
// once, and a key set whose deletes fail for a while is deleted in the end.
func TestGatewayKindsRetried(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(upstreamObj("u", "cp"))
	e.waitProgrammed(&configurationv1alpha1.KongUpstream{}, "u")
	e.sim.FailNext(http.MethodPost, konnectsim.PathUpstreamTargets, 3, http.StatusServiceUnavailable)
	e.sim.LoseNext(http.MethodPost, konnectsim.PathUpstreamTargets, 1)
	tgt := targetObj("t", "u", "10.0.0.1:80")
	e.create(tgt)
	e.waitProgrammed(tgt, "t")
	if got := e.simByUID(konnectsim.KindTarget, tgt.UID); len(got) != 1 || got[0].ID != tgt.Status.Konnect.ID {
		t.Errorf("targets in Konnect: %+v, want exactly the one in status (%s)", got, tgt.Status.Konnect.ID)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathUpstreamTargets); n != 4 {
		t.Errorf("%d target creates, want 4: the 3 failed and the lost one, whose target is then adopted by its tag", n)
	}

	ks := keySetObj("ks", "cp")
	e.create(ks)
	e.waitProgrammed(ks, "ks")
	e.sim.FailNext(http.MethodDelete, konnectsim.PathKeySet, 3, http.StatusBadGateway)
	if err := e.c.Delete(e.ctx, ks); err != nil {
		t.Fatal(err)
	}
	e.waitGone(&configurationv1alpha1.KongKeySet{}, "ks")
	if got := e.simByUID(konnectsim.KindKeySet, ks.UID); len(got) != 0 {
		t.Errorf("key set still in Konnect after its object was deleted")
	}
	if n := count(e.sim, http.MethodDelete, konnectsim.PathKeySet); n != 4 {
		t.Errorf("%d key set deletes, want 4 (3 failed, then the one that worked)", n)
	}
}

// Konnect keeps no tags on a data plane client certificate, so a create whose answer was lost is found again by the
// certificate itself: exactly one certificate ends in Konnect, the one in status.
func TestDataPlaneCertificateCreatedOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	cp := e.readyControlPlane("cp")
	e.sim.LoseNext(http.MethodPost, konnectsim.PathDPCertificates, 1)
	dp := dpCertificateObj("dp", "cp")
	e.create(dp)
	e.waitProgrammed(dp, "dp")
	var inCP []konnectsim.Object
	for _, o := range e.sim.ObjectsOf(konnectsim.KindDPCertificate) {
		if o.ControlPlaneID == cp.Status.ID {
			inCP = append(inCP, o)
		}
	}
	if len(inCP) != 1 || inCP[0].ID != dp.Status.Konnect.ID {
		t.Errorf("%d data plane certificates in the control plane (%+v), want exactly the one in status (%s)", len(inCP), inCP, dp.Status.Konnect.ID)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathDPCertificates); n != 1 {
		t.Errorf("%d data plane certificate creates, want 1: the lost one, whose certificate is then found by its PEM", n)
	}
}
