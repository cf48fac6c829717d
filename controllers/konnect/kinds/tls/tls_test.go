package tls

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
)

// PEM read from a Secret fills the body; the hashed body holds the Secret's name and version instead, never the PEM.
func TestSecretMaterialIsNotHashed(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "ns", ResourceVersion: "7"},
		Data: map[string][]byte{"tls.crt": []byte("CERT PEM"), "tls.key": []byte("KEY PEM")}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	m := &material{fields: map[string]any{}}
	check, err := m.readSecret(context.Background(), c, "ns", &configurationv1alpha1.SecretNamespacedRef{Name: "tls"},
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

// A missing Secret, a missing key and another namespace are named in the message, without any value.
func TestSecretProblems(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "half", Namespace: "ns"}, Data: map[string][]byte{"tls.crt": []byte("CERT PEM")}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	other := "other"
	for _, tc := range []struct {
		ref  configurationv1alpha1.SecretNamespacedRef
		want string
	}{
		{configurationv1alpha1.SecretNamespacedRef{Name: "none"}, "Secret ns/none not found"},
		{configurationv1alpha1.SecretNamespacedRef{Name: "half"}, `Secret ns/half has no key "tls.key"`},
		{configurationv1alpha1.SecretNamespacedRef{Name: "half", Namespace: &other}, "Secret other/half is in another namespace"},
	} {
		m := &material{fields: map[string]any{}}
		check, err := m.readSecret(context.Background(), c, "ns", &tc.ref, []string{secretKeyCert, secretKeyKey}, []string{"cert", "key"})
		if err != nil || check.OK || !strings.HasPrefix(check.Message, tc.want) || strings.Contains(check.Message, "PEM") {
			t.Errorf("%+v: check %+v err %v, want a failure %q", tc.ref, check, err, tc.want)
		}
	}
}
