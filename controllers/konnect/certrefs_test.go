package konnect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
)

// applyManifestsAcross creates the objects of a testdata file in the namespaces they name: ${NAMESPACE} is the
// test's namespace and ${OTHER_NAMESPACE} its second one. ${CERT}, ${KEY} (and _2, _3) and ${CA_CERT_1}, ${CA_CERT_2}
// are PEM data made for the test, written as YAML double-quoted strings.
func (e *env) applyManifestsAcross(file string) []*unstructured.Unstructured {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		e.t.Fatal(err)
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	pairs := []string{"${SERVER_URL}", e.sim.URL(), "${TOKEN}", konnectsim.DefaultToken, "${OTHER_NAMESPACE}", e.other, "${NAMESPACE}", e.ns}
	for _, suffix := range []string{"", "_2", "_3"} {
		cert, key := konnectsim.TestCertificate("client"+suffix+".example.com", false)
		pairs = append(pairs, "${CERT"+suffix+"}", quoted(cert), "${KEY"+suffix+"}", quoted(key))
	}
	for _, n := range []string{"1", "2"} {
		ca, _ := konnectsim.TestCertificate("ca-"+n, true)
		pairs = append(pairs, "${CA_CERT_"+n+"}", quoted(ca))
	}
	text := strings.NewReplacer(pairs...).Replace(string(raw))
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			e.t.Fatal(err)
		}
		e.createIn(u.GetNamespace(), u)
		objs = append(objs, u)
	}
	return objs
}

// waitProgrammedIn waits until every object the operator programs is Programmed, in its own namespace.
func (e *env) waitProgrammedIn(objs []*unstructured.Unstructured) {
	e.t.Helper()
	for _, u := range objs {
		switch u.GetKind() {
		case "Secret", "KonnectAPIAuthConfiguration", "KongPlugin", "KongReferenceGrant":
			continue
		}
		e.eventually(30*time.Second, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()+" Programmed", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(u.GroupVersionKind())
			if err := e.c.Get(e.ctx, types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, got); err != nil {
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

// konnectIDIn is status.konnect.id of the object of u's kind namespace/name.
func (e *env) konnectIDIn(u *unstructured.Unstructured, namespace, name string) string {
	e.t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := e.c.Get(e.ctx, types.NamespacedName{Namespace: namespace, Name: name}, got); err != nil {
		e.t.Fatal(err)
	}
	id, _, _ := unstructured.NestedString(got.Object, "status", "konnect", "id")
	return id
}

// Kong's sample manifests for certificate references apply unchanged and end Programmed: a KongService with a
// client certificate and CA certificates (one of each in another namespace, through KongReferenceGrants), a
// KongUpstream with a client certificate, certificates placed in a control plane of another namespace, a
// KongCertificate reading a Secret of another namespace, and a consumer whose credential Secret is labelled
// konghq.com/credential: hmac. In Konnect the service and the upstream name the certificates' IDs.
func TestKongCertificateRefsManifestsApply(t *testing.T) {
	e := newEnv(t, envOptions{otherNamespace: true})
	objs := e.applyManifestsAcross("kong-certificate-refs.yaml")
	e.waitProgrammedIn(objs)
	kinds := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		kinds[u.GetKind()] = u
	}
	clientID := e.konnectIDIn(kinds["KongCertificate"], e.other, "client-cert-1")
	ca1 := e.konnectIDIn(kinds["KongCACertificate"], e.other, "ca-cert-1")
	ca2 := e.konnectIDIn(kinds["KongCACertificate"], e.ns, "ca-cert-2")
	svc := e.simEntity(konnectsim.KindService, e.konnectIDIn(kinds["KongService"], e.ns, "service-1"))
	if got := fmt.Sprint(svc["client_certificate"]); got != fmt.Sprint(map[string]any{"id": clientID}) {
		t.Errorf("service client_certificate %s, want id %s", got, clientID)
	}
	if got, want := svc["ca_certificates"], []any{ca1, ca2}; !reflect.DeepEqual(got, want) {
		t.Errorf("service ca_certificates %v, want %v", got, want)
	}
	up := e.simEntity(konnectsim.KindUpstream, e.konnectIDIn(kinds["KongUpstream"], e.ns, "upstream-1"))
	if got, want := fmt.Sprint(up["client_certificate"]), fmt.Sprint(map[string]any{"id": e.konnectIDIn(kinds["KongCertificate"], e.ns, "client-cert-2")}); got != want {
		t.Errorf("upstream client_certificate %s, want %s", got, want)
	}
	if n := len(e.sim.ObjectsOf(konnectsim.KindHMACAuth)); n != 1 {
		t.Errorf("%d HMAC credentials in Konnect, want 1 (from the Secret labelled hmac)", n)
	}
	if n := len(e.sim.ObjectsOf(konnectsim.KindCertificate)); n != 3 {
		t.Errorf("%d certificates in Konnect, want 3 (one read from the Secret of the other namespace)", n)
	}
}

// A certificate reference into another namespace without a KongReferenceGrant there is refused (Konnect is not
// asked), and one into the same control plane is required: a certificate of another control plane is refused.
func TestCertificateRefsChecked(t *testing.T) {
	e := newEnv(t, envOptions{otherNamespace: true})
	e.readyControlPlane("cp")
	e.readyControlPlane("cp2")
	e.create(certificateObj("cert", "cp", "a.example.com"))
	e.create(certificateObj("cert-cp2", "cp2", "b.example.com"))
	e.createIn(e.other, certificateObj("far", "cp", "c.example.com"))
	e.waitProgrammed(&configurationv1alpha1.KongCertificate{}, "cert")
	e.waitProgrammed(&configurationv1alpha1.KongCertificate{}, "cert-cp2")

	svc := serviceObj("svc", "cp", "example.com")
	svc.Spec.ClientCertificateRef = &configurationv1alpha1.NamespacedRef{Name: "far", Namespace: &e.other}
	e.create(svc)
	c := e.waitCondition(&configurationv1alpha1.KongService{}, "svc", konnectv1alpha1.ConditionKongCertificateRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonRefNotPermitted, time.Minute)
	if want := fmt.Sprintf("no KongReferenceGrant in namespace %s allows configuration.konghq.com KongService from namespace %s to KongCertificate %s/far", e.other, e.ns, e.other); !strings.HasPrefix(c.Message, want) {
		t.Errorf("message %q, want %q", c.Message, want)
	}

	up := upstreamObj("up", "cp")
	up.Spec.ClientCertificateRef = &configurationv1alpha1.NamespacedRef{Name: "cert-cp2"}
	e.create(up)
	c = e.waitCondition(&configurationv1alpha1.KongUpstream{}, "up", konnectv1alpha1.ConditionKongCertificateRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, time.Minute)
	if !strings.Contains(c.Message, "is in control plane") {
		t.Errorf("message %q, want the other control plane named", c.Message)
	}
	if n := len(e.sim.ObjectsOf(konnectsim.KindService)) + len(e.sim.ObjectsOf(konnectsim.KindUpstream)); n != 0 {
		t.Errorf("%d services and upstreams in Konnect, want none", n)
	}
	// Pointing the upstream at the certificate of its own control plane makes it Programmed.
	e.eventually(10*time.Second, "upstream updated", func() error {
		if err := e.get(up, "up"); err != nil {
			return err
		}
		up.Spec.ClientCertificateRef.Name = "cert"
		return e.c.Update(e.ctx, up)
	})
	e.waitProgrammed(&configurationv1alpha1.KongUpstream{}, "up")
}
