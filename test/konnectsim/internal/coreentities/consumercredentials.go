package coreentities

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Credentials of consumers (the credentials of Kong's auth plugins) are core
// entities nested under a consumer: /core-entities/consumers/{consumerId}/
// basic-auth, key-auth, acls, jwt and hmac-auth, each with list, create
// (201), get, upsert (PUT, 200) and delete (204); /core-entities/basic-auths,
// key-auths, acls, jwts and hmac-auths list and get those of every consumer.
// They behave like the other core entities (see coreentities.go) but carry
// created_at only, no updated_at; Kong's own rules on top:
//   - basic-auth: username (unique) and password are required; the password is
//     stored, and returned, as the hex SHA-1 of password + consumer id;
//   - key-auth: key (unique) is generated when left out; ttl is optional;
//   - acls: group is required, and unique per consumer;
//   - jwt: key (unique) and secret are generated when left out; algorithm
//     defaults to HS256, and every algorithm but the HMAC ones (HS*) needs
//     rsa_public_key, a PEM key ("invalid key" otherwise);
//   - hmac-auth: username (unique) is required; secret is generated when left out.
// GET /{id} also finds a credential by username (basic-auth, hmac-auth), key
// (key-auth, jwt) or group (acls, within the consumer). Deleting a consumer
// deletes its credentials.

// jwtAlgorithms are the algorithms Konnect's API accepts for a jwt credential.
var jwtAlgorithms = []string{"ES256", "ES256K", "ES384", "ES512", "ESB256", "ESB320", "ESB384", "ESB512", "ESP256", "ESP384",
	"ESP512", "Ed25519", "Ed448", "EdDSA", "HS256", "HS384", "HS512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512"}

// credentialFields are the fields every credential has.
func credentialFields(extra map[string]fieldSpec) map[string]fieldSpec {
	fields := map[string]fieldSpec{"id": {kind: fString}, "tags": tagsField, "consumer": {kind: fObject}}
	for k, v := range extra {
		fields[k] = v
	}
	return fields
}

// randomSecret is what Kong generates for a key or secret left out.
func randomSecret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func requireFields(obj object, fields ...string) []errorDetail {
	var missing []string
	for _, f := range fields {
		if store.Str(obj[f]) == "" {
			missing = append(missing, "'"+f+"'")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []errorDetail{entityError("missing properties: %s", strings.Join(missing, ", "))}
}

var basicAuthSpec = &kindSpec{
	kind:     store.KindBasicAuth,
	label:    "basic-auth credential",
	fields:   credentialFields(map[string]fieldSpec{"username": {kind: fString}, "password": {kind: fString}}),
	defaults: func() object { return object{} },
	unique:   []string{"username"},
	parent:   "consumer",
	// Kong stores a hash of the password salted with the consumer id, and never returns the password itself.
	prepare: func(body object) []errorDetail {
		if p := store.Str(body["password"]); p != "" {
			sum := sha1.Sum([]byte(p + store.ParentOf(body, "consumer")))
			body["password"] = hex.EncodeToString(sum[:])
		}
		return nil
	},
	check: func(obj object) []errorDetail { return requireFields(obj, "username", "password") },
}

var keyAuthSpec = &kindSpec{
	kind:     store.KindKeyAuth,
	label:    "key-auth credential",
	fields:   credentialFields(map[string]fieldSpec{"key": {kind: fString}, "ttl": {kind: fInt, min: 0, max: 100000000}}),
	defaults: func() object { return object{"key": randomSecret()} },
	unique:   []string{"key"},
	parent:   "consumer",
}

var aclSpec = &kindSpec{
	kind:     store.KindACL,
	label:    "acl",
	fields:   credentialFields(map[string]fieldSpec{"group": {kind: fString}}),
	defaults: func() object { return object{} },
	// Kong's cache key of an ACL is (consumer, group).
	uniquePerParent: []string{"group"},
	parent:          "consumer",
	check:           func(obj object) []errorDetail { return requireFields(obj, "group") },
}

var jwtSpec = &kindSpec{
	kind:  store.KindJWT,
	label: "jwt credential",
	fields: credentialFields(map[string]fieldSpec{
		"key": {kind: fString}, "secret": {kind: fString}, "rsa_public_key": {kind: fString},
		"algorithm": {kind: fString, enum: jwtAlgorithms},
	}),
	defaults: func() object { return object{"key": randomSecret(), "secret": randomSecret(), "algorithm": "HS256"} },
	unique:   []string{"key"},
	parent:   "consumer",
	check: func(obj object) []errorDetail {
		alg := store.Str(obj["algorithm"])
		switch key := store.Str(obj["rsa_public_key"]); {
		case slices.Contains([]string{"HS256", "HS384", "HS512"}, alg):
			// HMAC: the secret signs, no key needed.
		case key == "":
			return []errorDetail{fieldError("rsa_public_key", "required for algorithm %s", alg)}
		case !isPEMKey(key):
			return []errorDetail{fieldError("rsa_public_key", "invalid key")}
		}
		return nil
	},
}

var hmacAuthSpec = &kindSpec{
	kind:     store.KindHMACAuth,
	label:    "hmac-auth credential",
	fields:   credentialFields(map[string]fieldSpec{"username": {kind: fString}, "secret": {kind: fString}}),
	defaults: func() object { return object{"secret": randomSecret()} },
	unique:   []string{"username"},
	parent:   "consumer",
	check:    func(obj object) []errorDetail { return requireFields(obj, "username") },
}

// isPEMKey reports whether s is a PEM public (or private) key, as the
// OpenSSL check Kong makes of a jwt credential's rsa_public_key accepts.
func isPEMKey(s string) bool {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return false
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS1PublicKey(block.Bytes); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		return true
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}
