package images

import (
	"testing"

	"github.com/go-logr/logr"
)

func TestMirrorOf(t *testing.T) {
	s, err := NewStore(Options{StateDir: t.TempDir(), Log: logr.Discard(),
		Mirrors: map[string]string{"alm.local": "127.0.0.1:5000", "other.local:8443": "http://127.0.0.1:5001"}})
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789012345678901234567890123456789012345678901234567890123"
	for _, tc := range []struct{ ref, want string }{
		{"alm.local/konnect-operator:1.0.0", "127.0.0.1:5000/konnect-operator:1.0.0"},
		{"alm.local/team/app", "127.0.0.1:5000/team/app:latest"},
		{"alm.local/app@" + digest, "127.0.0.1:5000/app@" + digest},
		{"other.local:8443/app:2", "127.0.0.1:5001/app:2"},
		{"other.local/app:2", ""},
		{"app:2", ""},
		{"not a reference", ""},
	} {
		got, ok := s.mirrorOf(tc.ref)
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s: got mirror %s, want none", tc.ref, got)
		case tc.want != "" && (!ok || got.String() != tc.want):
			t.Errorf("%s: got %v (%v), want %s", tc.ref, got, ok, tc.want)
		case ok && got.Context().Scheme() != "http":
			t.Errorf("%s: scheme %s, want plain HTTP", tc.ref, got.Context().Scheme())
		}
	}
}
