package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// ContentDigest is the digest of what ALM installs for an OperatorVersion: its install strategy, CRD descriptions
// and objects, as "sha256:<hex>". It is computed over a canonical JSON form (object keys sorted, null values
// dropped, numbers by value), so the spec the resolver built and the same spec read back from the API server have
// the same digest, and any change to what would be applied changes it.
func ContentDigest(spec *almv1alpha1.OperatorVersionSpec) (string, error) {
	content := struct {
		Install  any `json:"install"`
		CRDs     any `json:"customresourcedefinitions"`
		Objects  any `json:"objects"`
		Webhooks any `json:"webhookdefinitions,omitempty"`
	}{Install: spec.Install, CRDs: spec.CustomResourceDefinitions, Objects: spec.Objects}
	if len(spec.WebhookDefinitions) > 0 { // absent otherwise: the digests of bundles without webhooks stay as they were
		content.Webhooks = spec.WebhookDefinitions
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("encoding the bundle content: %w", err)
	}
	canonical, err := canonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("encoding the bundle content: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// canonicalJSON re-encodes JSON with sorted keys, without null values and with numbers in one form per value (see
// canonicalNumber).
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(dropNulls(v))
}

// dropNulls removes the null members of objects (e.g. creationTimestamp: null in a pod template), which the API
// server may or may not keep; a null member means the same as a missing one.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	case json.Number:
		return canonicalNumber(t)
	}
	return v
}

// canonicalNumber writes a number in one form per value. The API server does not keep numbers as written in the
// objects it stores without a schema (spec.install, spec.objects): it decodes them and encodes them again, so
// 1.0 and 1e3 come back as 1 and 1000 (whole numbers that fit an int64 as integers), and 12.50 as 12.5. An integer
// literal is kept exactly (above 2^53 a float64 would round it); any other number is written as the shortest
// decimal form of its float64 value.
func canonicalNumber(n json.Number) json.Number {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return n // out of float64's range: the API server refuses it anyway
	}
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
