package image

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestKeychainFromDockerConfigJSON(t *testing.T) {
	// The default registry and its short alias, spelled through go-containerregistry's constant.
	hub := name.DefaultRegistry
	hubAlias := strings.TrimPrefix(hub, "index.")
	userPass := base64.StdEncoding.EncodeToString([]byte("bob:pw"))
	configs := [][]byte{
		[]byte(`{"auths":{
			"registry.example:5000": {"auth": "` + userPass + `"},
			"https://Mirror.Example/v1/": {"username": "alice", "password": "pw2"},
			"` + hubAlias + `": {"identitytoken": "idt"},
			"tokens.example": {"registrytoken": "rt"}}}`),
		[]byte(`{"auths":{"registry.example:5000": {"username": "second", "password": "loses"}}}`),
		[]byte(`{"legacy.example": {"username": "old", "password": "fmt"}}`),
	}
	kc, err := KeychainFromDockerConfigJSON(configs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		registry string
		want     authn.AuthConfig
	}{
		{"registry.example:5000", authn.AuthConfig{Username: "bob", Password: "pw"}},
		{"mirror.example", authn.AuthConfig{Username: "alice", Password: "pw2"}},
		{hub, authn.AuthConfig{IdentityToken: "idt"}},
		{hubAlias, authn.AuthConfig{IdentityToken: "idt"}},
		{"tokens.example", authn.AuthConfig{RegistryToken: "rt"}},
		{"legacy.example", authn.AuthConfig{Username: "old", Password: "fmt"}},
		{"registry.example", authn.AuthConfig{}}, // another port is another registry
		{"unknown.example", authn.AuthConfig{}},
	} {
		t.Run(tc.registry, func(t *testing.T) {
			reg, err := name.NewRegistry(tc.registry)
			if err != nil {
				t.Fatal(err)
			}
			a, err := kc.Resolve(reg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			if *got != tc.want {
				t.Errorf("credentials = %+v, want %+v", *got, tc.want)
			}
		})
	}
	if _, err := KeychainFromDockerConfigJSON([]byte(`{not json`)); err == nil {
		t.Error("invalid JSON accepted")
	}
}
