package image

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// dockerAuth is one entry of a docker config's "auths".
type dockerAuth struct {
	Auth          string `json:"auth,omitempty"`
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// config returns the entry's credentials, with "auth" (base64 of user:password) decoded so that every
// authentication scheme (basic, token exchange) can use them.
func (a dockerAuth) config() authn.AuthConfig {
	cfg := authn.AuthConfig{Auth: a.Auth, Username: a.Username, Password: a.Password,
		IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
	if raw, err := base64.StdEncoding.DecodeString(a.Auth); err == nil && cfg.Username == "" {
		if user, pass, ok := strings.Cut(string(raw), ":"); ok {
			cfg.Auth, cfg.Username, cfg.Password = "", user, pass
		}
	}
	return cfg
}

// secretKeychain resolves credentials from docker config auths, by registry host.
type secretKeychain struct {
	auths map[string]authn.AuthConfig // normalized registry host -> credentials
}

// KeychainFromDockerConfigJSON returns a keychain of the credentials in the .dockerconfigjson data of
// kubernetes.io/dockerconfigjson Secrets ({"auths": {host: {auth|username|password|identitytoken|registrytoken}}});
// the bare map of the older kubernetes.io/dockercfg format (.dockercfg) is read too. Keys may be host[:port],
// with or without a scheme and path; the default registry's aliases match each other. With several configs the
// first one that has the registry wins. A registry with no entry resolves to anonymous.
func KeychainFromDockerConfigJSON(configs ...[]byte) (authn.Keychain, error) {
	kc := &secretKeychain{auths: map[string]authn.AuthConfig{}}
	for i, data := range configs {
		var doc struct {
			Auths map[string]dockerAuth `json:"auths"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("docker config %d: %w", i, err)
		}
		if doc.Auths == nil {
			if err := json.Unmarshal(data, &doc.Auths); err != nil {
				return nil, fmt.Errorf("docker config %d: %w", i, err)
			}
		}
		for key, a := range doc.Auths {
			host := registryHost(key)
			if _, ok := kc.auths[host]; ok || host == "" {
				continue
			}
			kc.auths[host] = a.config()
		}
	}
	return kc, nil
}

// Resolve implements authn.Keychain.
func (k *secretKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if cfg, ok := k.auths[registryHost(target.RegistryStr())]; ok {
		return authn.FromConfig(cfg), nil
	}
	return authn.Anonymous, nil
}

// registryHost normalizes a docker config key or registry name to the registry's canonical host[:port]: no
// scheme, no path, lower case, the default registry's alias rewritten as go-containerregistry names it.
func registryHost(key string) string {
	k := strings.TrimSpace(key)
	if strings.Contains(k, "://") {
		if u, err := url.Parse(k); err == nil {
			k = u.Host
		}
	}
	k, _, _ = strings.Cut(k, "/")
	k = strings.ToLower(k)
	if r, err := name.NewRegistry(k); err == nil {
		return r.RegistryStr()
	}
	return k
}
