package kinds

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
)

func TestExpandURL(t *testing.T) {
	for _, tc := range []struct {
		url     string
		want    map[string]any
		wantErr bool
	}{
		{"https://api.example.com/v1", map[string]any{"protocol": "https", "host": "api.example.com", "port": int64(443), "path": "/v1"}, false},
		{"http://example.com:8080", map[string]any{"protocol": "http", "host": "example.com", "port": int64(8080)}, false},
		{"grpcs://example.com", map[string]any{"protocol": "grpcs", "host": "example.com", "port": int64(443)}, false},
		{"example.com/v1", nil, true},
		{"http://example.com:99999", nil, true},
	} {
		body := map[string]any{"url": tc.url, "host": "placeholder", "port": int64(80), "protocol": "http"}
		err := expandURL(body, tc.url)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.url, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if _, ok := body["url"]; ok {
			t.Errorf("%s: url is still in the body", tc.url)
		}
		for k, v := range tc.want {
			if body[k] != v {
				t.Errorf("%s: %s = %v, want %v", tc.url, k, body[k], v)
			}
		}
	}
}

func TestCredentialBody(t *testing.T) {
	secret := func(label string, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: map[string][]byte{}}
		if label != "" {
			s.Labels = map[string]string{CredentialLabel: label}
		}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		secret  *corev1.Secret
		want    map[string]any
		wantErr string
	}{
		{"basic-auth", secret("basic-auth", map[string]string{"username": "u", "password": "p"}), map[string]any{"username": "u", "password": "p"}, ""},
		{"legacy kongCredType key", secret("", map[string]string{"kongCredType": "key-auth", "key": "k"}), map[string]any{"key": "k"}, ""},
		{"jwt with optional fields", secret("jwt", map[string]string{"key": "k", "algorithm": "RS256", "rsa_public_key": "pem"}), map[string]any{"key": "k", "algorithm": "RS256", "rsa_public_key": "pem"}, ""},
		{"acl", secret("acl", map[string]string{"group": "admins"}), map[string]any{"group": "admins"}, ""},
		{"hmac-auth", secret("hmac-auth", map[string]string{"username": "u"}), map[string]any{"username": "u"}, ""},
		{"hmac, as Kong's Konnect reconciler labels it", secret("hmac", map[string]string{"username": "u", "secret": "s"}), map[string]any{"username": "u", "secret": "s"}, ""},
		{"missing field", secret("basic-auth", map[string]string{"username": "u"}), nil, `Secret ns/s: a basic-auth credential needs data key "password"`},
		{"no type", secret("", map[string]string{"key": "k"}), nil, "Secret ns/s has no label konghq.com/credential"},
		{"unsupported type", secret("oauth2", nil), nil, `credential type "oauth2" is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body, problem := credentialBody(tc.secret)
			if tc.wantErr != "" {
				if !strings.Contains(problem, tc.wantErr) {
					t.Fatalf("problem %q, want %q", problem, tc.wantErr)
				}
				return
			}
			if problem != "" || !reflect.DeepEqual(body, tc.want) {
				t.Errorf("body %v, problem %q; want %v", body, problem, tc.want)
			}
		})
	}
}

// A configuration read from a Secret is hashed as the Secret's name and version, never as its values.
func TestHashedPluginHidesSecretValues(t *testing.T) {
	desired := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 7}}
	fromSecret := entity.Refs{Found: &pluginConfig{secret: "limits@12"}}
	got := hashedPlugin(fromSecret, desired)
	if !reflect.DeepEqual(got["config"], map[string]any{"fromSecret": "limits@12"}) || got["name"] != "rate-limiting" {
		t.Errorf("hashed body %v", got)
	}
	if desired["config"].(map[string]any)["minute"] != 7 {
		t.Error("hashedPlugin changed the desired body")
	}
	other := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 8}}
	if !reflect.DeepEqual(hashedPlugin(fromSecret, other), got) {
		t.Error("two values of one Secret version hash differently: the hash depends on the value")
	}
	inline := entity.Refs{Found: &pluginConfig{}}
	if !reflect.DeepEqual(hashedPlugin(inline, desired), desired) {
		t.Error("an inline configuration is hashed as it is")
	}
}

// Without the KongConsumerGroup CRD, consumerGroups are reported as unsupported and block nothing.
func TestConsumerGroupsUnsupportedWithoutTheirCRD(t *testing.T) {
	kc := &configurationv1.KongConsumer{ConsumerGroups: []string{"gold"}}
	ids, check, err := consumerMapping{groups: false}.declaredGroups(context.Background(), nil, kc)
	if err != nil || ids != nil || check.OK || !check.Advisory || check.Reason != konnectv1alpha1.ReasonUnsupported ||
		!strings.Contains(check.Message, "gold") {
		t.Errorf("ids %v check %+v err %v", ids, check, err)
	}
}
