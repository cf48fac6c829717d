package coreentities

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"regexp"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Certificates (with their private keys), CA certificates, SNIs and keys are checked as Kong checks them: PEM that
// parses, a key that matches its certificate, a CA certificate that is a CA. An SNI names its certificate (which must
// exist) and is unique in the control plane; a key may be in a key set (which must exist) and its kid is unique in
// its set. Deleting a certificate deletes its SNIs; deleting a key set deletes its keys.

var certificateSpec = &kindSpec{
	kind:  store.KindCertificate,
	label: "certificate",
	fields: map[string]fieldSpec{
		"id": {kind: fString}, "cert": {kind: fString}, "key": {kind: fString}, "cert_alt": {kind: fString},
		"key_alt": {kind: fString}, "tags": tagsField, "snis": {kind: fStrings},
	},
	defaults: func() object { return object{} },
	check: func(obj object) []errorDetail {
		bad := checkPair(obj, "cert", "key", true)
		if obj["cert_alt"] != nil || obj["key_alt"] != nil {
			bad = append(bad, checkPair(obj, "cert_alt", "key_alt", true)...)
		}
		return bad
	},
}

var caCertificateSpec = &kindSpec{
	kind:     store.KindCACertificate,
	label:    "ca_certificate",
	fields:   map[string]fieldSpec{"id": {kind: fString}, "cert": {kind: fString}, "cert_digest": {kind: fString}, "tags": tagsField},
	defaults: func() object { return object{} },
	unique:   []string{"cert_digest"},
	check: func(obj object) []errorDetail {
		cert, bad := parseCertificate(obj, "cert")
		if bad != nil {
			return []errorDetail{*bad}
		}
		if !cert.IsCA {
			return []errorDetail{fieldError("cert", `certificate does not appear to be a CA because it is missing the "CA" basic constraint`)}
		}
		sum := sha256.Sum256(cert.Raw)
		obj["cert_digest"] = hex.EncodeToString(sum[:])
		return nil
	},
}

// hostNamePattern is a host name, with a leading or trailing wildcard label.
var hostNamePattern = regexp.MustCompile(`^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.\*)?$`)

var sniSpec = &kindSpec{
	kind:     store.KindSNI,
	label:    "snis",
	fields:   map[string]fieldSpec{"id": {kind: fString}, "name": {kind: fString}, "certificate": {kind: fObject}, "tags": tagsField},
	defaults: func() object { return object{} },
	unique:   []string{"name"},
	parent:   "certificate",
	refs:     map[string]store.Kind{"certificate": store.KindCertificate},
	hostName: true,
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		if name := store.Str(obj["name"]); !hostNamePattern.MatchString(name) {
			bad = append(bad, fieldError("name", "invalid value: %s", name))
		}
		if store.ParentOf(obj, "certificate") == "" {
			bad = append(bad, fieldError("certificate.id", "missing properties: 'id'"))
		}
		return bad
	},
}

var keySetSpec = &kindSpec{
	kind:     store.KindKeySet,
	label:    "key_sets",
	fields:   map[string]fieldSpec{"id": {kind: fString}, "name": {kind: fString}, "tags": tagsField},
	defaults: func() object { return object{} },
	unique:   []string{"name"},
}

var keySpec = &kindSpec{
	kind:  store.KindKey,
	label: "keys",
	fields: map[string]fieldSpec{
		"id": {kind: fString}, "kid": {kind: fString}, "name": {kind: fString}, "jwk": {kind: fString},
		"pem": {kind: fObject}, "set": {kind: fObject}, "tags": tagsField,
	},
	defaults: func() object { return object{} },
	unique:   []string{"name"},
	parent:   "set",
	refs:     map[string]store.Kind{"set": store.KindKeySet},
	check:    checkKey,
	uniqueKey: func(obj object) (string, string) {
		key := store.Str(obj["kid"]) + "/" + store.ParentOf(obj, "set")
		return key, "{kid=" + store.Str(obj["kid"]) + ",set=" + store.ParentOf(obj, "set") + "}"
	},
}

// checkKey: a kid, and a JWK (JSON whose kid is the key's) or a PEM pair (both halves parse).
func checkKey(obj object) []errorDetail {
	kid := store.Str(obj["kid"])
	if kid == "" {
		return []errorDetail{entityError("missing properties: 'kid'")}
	}
	jwk, hasJWK := obj["jwk"]
	pair, hasPEM := obj["pem"].(map[string]any)
	if !hasJWK && !hasPEM {
		return []errorDetail{entityError("at least one of these fields must be non-empty: 'jwk', 'pem'")}
	}
	var bad []errorDetail
	if hasJWK {
		var parsed map[string]any
		if json.Unmarshal([]byte(store.Str(jwk)), &parsed) != nil {
			bad = append(bad, fieldError("jwk", "could not parse JWK"))
		} else if store.Str(parsed["kid"]) != kid {
			bad = append(bad, entityError("kid in jwk.kid must be equal to keys.kid"))
		}
	}
	if hasPEM {
		if _, ok := parsePrivateKey(store.Str(pair["private_key"])); !ok {
			bad = append(bad, fieldError("pem.private_key", "invalid pem format"))
		}
		if b, _ := pem.Decode([]byte(store.Str(pair["public_key"]))); b == nil || !strings.Contains(b.Type, "PUBLIC KEY") {
			bad = append(bad, fieldError("pem.public_key", "invalid pem format"))
		} else if _, err := x509.ParsePKIXPublicKey(b.Bytes); err != nil && b.Type == "PUBLIC KEY" {
			bad = append(bad, fieldError("pem.public_key", "invalid pem format"))
		}
	}
	return bad
}

// checkPair checks a PEM certificate and its private key (field names certField, keyField): both present, both
// parse, and the key is the certificate's.
func checkPair(obj object, certField, keyField string, required bool) []errorDetail {
	cert, bad := parseCertificate(obj, certField)
	if bad != nil {
		return []errorDetail{*bad}
	}
	raw := store.Str(obj[keyField])
	if raw == "" && required {
		return []errorDetail{entityError("missing properties: '%s'", keyField)}
	}
	key, ok := parsePrivateKey(raw)
	if !ok {
		return []errorDetail{fieldError(keyField, "invalid key: failed to parse private key")}
	}
	if pub, isPub := key.Public().(interface{ Equal(crypto.PublicKey) bool }); isPub && !pub.Equal(cert.PublicKey) {
		return []errorDetail{entityError("certificate does not match key")}
	}
	return nil
}

// parseCertificate parses the PEM certificate in obj[field].
func parseCertificate(obj object, field string) (*x509.Certificate, *errorDetail) {
	raw := store.Str(obj[field])
	if raw == "" {
		d := entityError("missing properties: '%s'", field)
		return nil, &d
	}
	b, _ := pem.Decode([]byte(raw))
	if b == nil || b.Type != "CERTIFICATE" {
		d := fieldError(field, "invalid certificate: not a PEM-encoded certificate")
		return nil, &d
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		d := fieldError(field, "invalid certificate: %s", err.Error())
		return nil, &d
	}
	return cert, nil
}

// parsePrivateKey parses a PEM private key (PKCS#8, PKCS#1 or SEC 1).
func parsePrivateKey(raw string) (crypto.Signer, bool) {
	b, _ := pem.Decode([]byte(raw))
	if b == nil {
		return nil, false
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		s, ok := k.(crypto.Signer)
		return s, ok
	}
	if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return k, true
	}
	if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
		return k, true
	}
	return nil, false
}
