package servingcert

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDecide: a new Deployment is rolled onto the current certificate; a renewed one is written in place and the
// pods stay until the fallback is due (FallbackBefore the expiry of the certificate they were rolled onto, and not
// before FallbackGrace after the renewal); then they are rolled only when they do not serve the current one.
func TestDecide(t *testing.T) {
	day := 24 * time.Hour
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, _, err := EnsureCA(nil, nil, "ns/op.v1", issued)
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := EnsureServing(nil, ca, Hosts("svc", "ns"), issued)
	if err != nil {
		t.Fatal(err)
	}
	renewedAt := issued.Add(250 * day) // old: due at ~243, expires at 365
	current, _, err := EnsureServing(nil, ca, Hosts("svc", "ns"), renewedAt)
	if err != nil {
		t.Fatal(err)
	}
	rolledOld := RolledOnto(old)
	fallback := issued.Add(ServingLifetime - FallbackBefore)
	if got := FallbackAt(rolledOld, current); !got.Equal(fallback) {
		t.Fatalf("FallbackAt = %s, want %s (FallbackBefore the expiry of the certificate the pods run)", got, fallback)
	}
	expired := Rolled{Hash: rolledOld.Hash, NotAfter: issued.Add(-day).Format(time.RFC3339)}
	for _, tc := range []struct {
		name   string
		rolled Rolled
		now    time.Time
		serves bool
		want   Rolled
	}{
		{"new Deployment", Rolled{}, renewedAt, false, RolledOnto(current)},
		{"rolled onto the current one", RolledOnto(current), fallback.Add(day), false, RolledOnto(current)},
		{"renewed, fallback not due", rolledOld, renewedAt, false, rolledOld},
		{"renewed, just before the fallback", rolledOld, fallback.Add(-time.Second), false, rolledOld},
		{"fallback due, serves the renewed one", rolledOld, fallback, true, rolledOld},
		{"fallback due, serves the old one", rolledOld, fallback, false, RolledOnto(current)},
		{"old one expired, within the grace", expired, renewedAt.Add(FallbackGrace - 2*time.Minute), false, expired},
		{"old one expired, after the grace", expired, renewedAt.Add(FallbackGrace), false, RolledOnto(current)},
		{"old one unknown, within the grace", Rolled{Hash: rolledOld.Hash}, renewedAt.Add(FallbackGrace - 2*time.Minute), false, Rolled{Hash: rolledOld.Hash}},
		{"old one unknown, after the grace", Rolled{Hash: rolledOld.Hash}, renewedAt.Add(FallbackGrace), false, RolledOnto(current)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			got := Decide(tc.rolled, current, tc.now, func() bool { asked = true; return tc.serves })
			if got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
			if due := !tc.now.Before(FallbackAt(tc.rolled, current)) && tc.rolled.Hash != "" && tc.rolled != RolledOnto(current); asked != due {
				t.Errorf("asked what the Service serves: %t, want %t", asked, due)
			}
		})
	}
}

// TestServes: a TLS handshake tells which certificate a server presents; one that does not verify against the
// roots is an error, not a match.
func TestServes(t *testing.T) {
	now := time.Now()
	ca, _, _ := EnsureCA(nil, nil, "ns/op.v1", now)
	other, _, _ := EnsureCA(nil, nil, "ns/other", now)
	cert, key, _ := EnsureServing(nil, ca, Hosts("svc", "ns"), now)
	renewed, _, _ := EnsureServing(nil, ca, Hosts("svc", "ns"), now)
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	dial := (&net.Dialer{}).DialContext
	ctx := context.Background()
	if ok, err := Serves(ctx, dial, addr, "svc.ns.svc", ca.Bundle(), cert); !ok || err != nil {
		t.Errorf("Serves(the served certificate) = %t, %v; want true", ok, err)
	}
	if ok, err := Serves(ctx, dial, addr, "svc.ns.svc", ca.Bundle(), renewed); ok || err != nil {
		t.Errorf("Serves(another certificate) = %t, %v; want false", ok, err)
	}
	if ok, err := Serves(ctx, dial, addr, "svc.ns.svc", other.Bundle(), cert); ok || err == nil {
		t.Errorf("Serves(roots that do not sign it) = %t, %v; want an error", ok, err)
	}
}
