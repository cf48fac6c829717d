package tls

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
)

// PEM read from a Secret fills the body; the hashed body holds the Secret's name and version instead, never the PEM.
func TestSecretMaterialIsNotHashed(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "ns", ResourceVersion: "7"},
		Data: map[string][]byte{"tls.crt": []byte("CERT PEM"), "tls.key": []byte("KEY PEM")}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	m := &material{fields: map[string]any{}}
	check, err := m.readSecret(context.Background(), c, fromNS, &configurationv1alpha1.SecretNamespacedRef{Name: "tls"},
		[]string{secretKeyCert, secretKeyKey}, []string{"cert", "key"})
	if err != nil || !check.OK {
		t.Fatalf("reading the Secret: %+v %v", check, err)
	}
	body, err := certificateBody(configurationv1alpha1.KongCertificateAPISpec{}, entity.Refs{Found: m}, []string{"k8s-uid:1"})
	if err != nil || body["cert"] != "CERT PEM" || body["key"] != "KEY PEM" {
		t.Fatalf("body %v %v, want the Secret's PEM", body, err)
	}
	h := hashed(entity.Refs{Found: m}, body)
	if _, ok := h["key"]; ok {
		t.Errorf("hashed body %v holds the key", h)
	}
	if got, _ := h["fromSecrets"].([]string); len(got) != 1 || got[0] != "tls@"+secret.ResourceVersion {
		t.Errorf("hashed body %v, want the Secret's name and version", h)
	}
}

// fromNS is a KongCertificate in namespace ns.
var fromNS = grants.From{Group: "configuration.konghq.com", Kind: "KongCertificate", Namespace: "ns"}

// A missing Secret, a missing key and another namespace without a grant are named in the message, without any
// value; a Secret of another namespace is read where a KongReferenceGrant there allows it.
func TestSecretProblems(t *testing.T) {
	half := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "half", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("CERT PEM")}}
	full := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "full", Namespace: "granted"},
		Data: map[string][]byte{"tls.crt": []byte("CERT PEM"), "tls.key": []byte("KEY PEM")}}
	grant := &configurationv1alpha1.KongReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "granted"}, Spec: configurationv1alpha1.KongReferenceGrantSpec{
		From: []configurationv1alpha1.ReferenceGrantFrom{{Group: "configuration.konghq.com", Kind: "KongCertificate", Namespace: "ns"}},
		To:   []configurationv1alpha1.ReferenceGrantTo{{Group: "core", Kind: "Secret"}},
	}}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = configurationv1alpha1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(half, full, grant).Build()
	other, granted := "other", "granted"
	for _, tc := range []struct {
		ref  configurationv1alpha1.SecretNamespacedRef
		want string
	}{
		{configurationv1alpha1.SecretNamespacedRef{Name: "none"}, "Secret ns/none not found"},
		{configurationv1alpha1.SecretNamespacedRef{Name: "half"}, `Secret ns/half has no key "tls.key"`},
		{configurationv1alpha1.SecretNamespacedRef{Name: "half", Namespace: &other}, "no KongReferenceGrant in namespace other allows configuration.konghq.com KongCertificate from namespace ns to Secret other/half"},
		{configurationv1alpha1.SecretNamespacedRef{Name: "full", Namespace: &granted}, ""},
	} {
		m := &material{fields: map[string]any{}}
		check, err := m.readSecret(context.Background(), c, fromNS, &tc.ref, []string{secretKeyCert, secretKeyKey}, []string{"cert", "key"})
		if tc.want == "" {
			if err != nil || !check.OK || m.secrets[0] != "granted/full@"+full.ResourceVersion {
				t.Errorf("%+v: check %+v err %v secrets %v, want the granted Secret read", tc.ref, check, err, m.secrets)
			}
			continue
		}
		if err != nil || check.OK || !strings.HasPrefix(check.Message, tc.want) || strings.Contains(check.Message, "PEM") {
			t.Errorf("%+v: check %+v err %v, want a failure %q", tc.ref, check, err, tc.want)
		}
	}
}
