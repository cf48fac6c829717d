package bundle

import (
	"testing"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// TestContentDigestCanonicalForm: what the API server may change in a stored spec (key order, null members,
// how a number is written) does not change the digest; any change of a value does.
func TestContentDigestCanonicalForm(t *testing.T) {
	digest := func(objects ...string) string {
		t.Helper()
		spec := &almv1alpha1.OperatorVersionSpec{Install: opv1alpha1.NamedInstallStrategy{StrategyName: "deployment"}}
		for _, o := range objects {
			spec.Objects = append(spec.Objects, runtime.RawExtension{Raw: []byte(o)})
		}
		d, err := ContentDigest(spec)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	same := [][2]string{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{`{"a":1,"n":null}`, `{"a":1}`},
		{`{"m":{"creationTimestamp":null}}`, `{"m":{}}`},
		{`{"x":1.0}`, `{"x":1}`},
		{`{"x":1e3}`, `{"x":1000}`},
		{`{"x":1E3}`, `{"x":1000.000}`},
		{`{"x":12.50}`, `{"x":12.5}`},
		{`{"x":-0.0}`, `{"x":0}`},
		{`{"x":2.5e-1}`, `{"x":0.25}`},
		{`{"x":[1.0,2e0]}`, `{"x":[1,2]}`},
		{`{"x":12345678901234567890}`, `{"x":1.2345678901234567e19}`},
	}
	for _, p := range same {
		if a, b := digest(p[0]), digest(p[1]); a != b {
			t.Errorf("%s and %s have different digests", p[0], p[1])
		}
	}
	different := [][2]string{
		{`{"x":1}`, `{"x":2}`},
		{`{"x":0.25}`, `{"x":0.26}`},
		{`{"x":9007199254740993}`, `{"x":9007199254740992}`}, // above 2^53: integers are kept exactly
		{`{"x":"1"}`, `{"x":1}`},
		{`{"x":[]}`, `{"x":{}}`},
		{`{"x":[1,2]}`, `{"x":[2,1]}`},
	}
	for _, p := range different {
		if a, b := digest(p[0]), digest(p[1]); a == b {
			t.Errorf("%s and %s have the same digest", p[0], p[1])
		}
	}
}
