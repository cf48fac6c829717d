package konnectapi

import (
	"testing"
	"time"
)

func TestNormalizeServerURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: "eu.api.konghq.com", want: "https://eu.api.konghq.com"},
		{in: " us.api.konghq.com/ ", want: "https://us.api.konghq.com"},
		{in: "https://global.api.konghq.com", want: "https://global.api.konghq.com"},
		{in: "https://proxy.example.com/konnect/", want: "https://proxy.example.com/konnect"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{in: "", wantErr: true},
		{in: "ftp://example.com", wantErr: true},
		{in: "https://", wantErr: true},
		{in: "https://user:pw@example.com", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeServerURL(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("NormalizeServerURL(%q) = %q, %v; want %q (error: %v)", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{
		{"", time.Second}, {"3", 3 * time.Second}, {"0", 0}, {"junk", time.Second}, {"100000", maxRetryAfter},
	} {
		if got := retryAfter(tc.h); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.h, got, tc.want)
		}
	}
}

func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		code                     int
		notFound, conflict, perm bool
	}{
		{404, true, false, true}, {409, false, true, false}, {400, false, false, true}, {429, false, false, false},
		{500, false, false, false}, {0, false, false, false},
	} {
		var err error = &APIError{StatusCode: tc.code, Op: "x", Err: errTest}
		if tc.code == 0 {
			err = errTest
		}
		if IsNotFound(err) != tc.notFound || IsConflict(err) != tc.conflict || IsPermanent(err) != tc.perm {
			t.Errorf("HTTP %d: notFound %v conflict %v permanent %v", tc.code, IsNotFound(err), IsConflict(err), IsPermanent(err))
		}
	}
}

var errTest = errTestT("boom")

type errTestT string

func (e errTestT) Error() string { return string(e) }
