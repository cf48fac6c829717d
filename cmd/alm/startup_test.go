package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// An API server that refuses ALM for a while (restarted, its authorizer not warm yet) is waited for, not a reason to
// exit.
func TestWaitForAPIServer(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		default:
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := waitForAPIServer(ctx, &rest.Config{Host: srv.URL}, logr.Discard()); err != nil {
		t.Fatalf("waitForAPIServer: %v", err)
	}
	if calls.Load() <= 3 {
		t.Fatalf("returned after %d calls, before the API server answered", calls.Load())
	}

	// Nothing answers: it gives up only when its context ends (SIGTERM), saying where it looked.
	srv.Close()
	ctx, cancel = context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := waitForAPIServer(ctx, &rest.Config{Host: srv.URL}, logr.Discard()); err == nil {
		t.Fatal("waitForAPIServer returned nil with no API server")
	}
}

func TestLeaderIdentityIsThePod(t *testing.T) {
	t.Setenv("POD_NAME", "alm-manager-5ddd8dbd48-smzs6")
	if id, _ := leaderIdentity(); id != "alm-manager-5ddd8dbd48-smzs6" {
		t.Errorf("identity in a pod = %q, want the pod's name", id)
	}
	t.Setenv("POD_NAME", "")
	a, _ := leaderIdentity()
	b, _ := leaderIdentity()
	if a == b {
		t.Errorf("two processes outside a pod share the identity %q", a)
	}
}
