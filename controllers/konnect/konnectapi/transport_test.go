package konnectapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A 429 is retried after its Retry-After, with the same body, and the pause holds every request of the
// organization; the final status reaches the caller's error.
func TestGatedDoerHonoursRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"name":"x"}` {
			t.Errorf("body %q on attempt %d", body, calls.Load()+1)
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	gate := &orgGate{}
	d := &gatedDoer{base: srv.Client(), gate: gate}
	code := &atomic.Int32{}
	ctx := context.WithValue(context.Background(), statusKey{}, code)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"name":"x"}`))
	start := time.Now()
	resp, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || calls.Load() != 2 || code.Load() != http.StatusCreated {
		t.Errorf("status %d after %d calls (recorded %d), want 201 after 2", resp.StatusCode, calls.Load(), code.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %s, before Retry-After (1s)", waited)
	}
}

// Requests for another host (the SDK sends GET /v3/organizations/me to Konnect's global host) go to the pinned
// server when the server URL is not Konnect's.
func TestGatedDoerPinsHost(t *testing.T) {
	var paths atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths.Store(r.URL.Path)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	api := newSDKAPI(srv.URL, "kpat_test", &orgGate{}, srv.Client()).(*sdkAPI)
	_, _ = api.OrganizationID(context.Background())
	if got, _ := paths.Load().(string); got != "/v3/organizations/me" {
		t.Errorf("the organization call did not reach the configured server (got path %q)", got)
	}
}
