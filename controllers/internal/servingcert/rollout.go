package servingcert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"time"
)

// A renewed serving certificate is written into its Secret in place: the pods keep running, and an operator that
// watches its certificate files (controller-runtime's webhook server does, with certwatcher) serves the new one once
// the kubelet has refreshed the mounted Secret, so a renewal replaces no pod and fails no write. The pod template
// records the certificate its pods were last rolled onto (Rolled); a rollout onto the current certificate is only
// the fallback for operators that never reload it (FallbackAt, Decide).
const (
	// FallbackBefore is how long before the expiry of the certificate the pods were rolled onto the fallback is
	// due: a sixth of the serving lifetime (about two months), half-way between its renewal and its expiry.
	FallbackBefore = ServingLifetime / 6
	// FallbackGrace is how long after a certificate is issued the fallback waits at least, for the kubelet to
	// refresh the mounted Secret (about a minute) and the operator to reload it.
	FallbackGrace = 10 * time.Minute
)

// Rolled is what a webhook Deployment's pod template records of the serving certificate its pods were last rolled
// onto: its Hash and NotAfter (RFC 3339). A change of either rolls the pods.
type Rolled struct {
	Hash, NotAfter string
}

// RolledOnto is what the pod template records when its pods are rolled onto cert (PEM).
func RolledOnto(cert []byte) Rolled {
	sum := sha256.Sum256(cert)
	r := Rolled{Hash: hex.EncodeToString(sum[:])[:16]}
	if c, err := parseCert(cert); err == nil {
		r.NotAfter = c.NotAfter.UTC().Format(time.RFC3339)
	}
	return r
}

// FallbackAt is when pods rolled onto rolled must be rolled onto cert, the current certificate, unless they serve it
// already: FallbackBefore the expiry of the certificate they were rolled onto, and not before FallbackGrace after
// cert was issued. Zero when they were rolled onto cert; FallbackGrace after cert was issued when the expiry of the
// one they were rolled onto is not recorded.
func FallbackAt(rolled Rolled, cert []byte) time.Time {
	current := RolledOnto(cert)
	if rolled.Hash == current.Hash {
		return time.Time{}
	}
	c, err := parseCert(cert)
	if err != nil {
		return time.Time{}
	}
	earliest := c.NotBefore.Add(time.Minute + FallbackGrace) // NewCA and EnsureServing back-date NotBefore by a minute
	notAfter, err := time.Parse(time.RFC3339, rolled.NotAfter)
	if err != nil {
		return earliest
	}
	return later(earliest, notAfter.Add(-FallbackBefore))
}

// Decide returns what the pod template records at now, given what it records (rolled; zero for a new Deployment)
// and the current certificate: rolled while the fallback is not due, or while served says the pods serve cert
// (served is called only when the fallback is due); else RolledOnto(cert), which rolls the pods.
func Decide(rolled Rolled, cert []byte, now time.Time, served func() bool) Rolled {
	if rolled.Hash == "" {
		return RolledOnto(cert)
	}
	at := FallbackAt(rolled, cert)
	if at.IsZero() || now.Before(at) || served() {
		return rolled
	}
	return RolledOnto(cert)
}

// Serves says whether the TLS server at addr (reached through dial) presents cert (PEM) for serverName, verified
// against roots (PEM): a handshake, nothing sent. An error says why it could not tell.
func Serves(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), addr, serverName string, roots, cert []byte) (bool, error) {
	want, err := parseCert(cert)
	if err != nil {
		return false, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(roots) {
		return false, errors.New("no CA certificate to verify the served certificate with")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	conn := tls.Client(raw, &tls.Config{ServerName: serverName, RootCAs: pool, MinVersion: tls.VersionTLS12})
	defer func() { _ = conn.Close() }()
	if err := conn.HandshakeContext(ctx); err != nil {
		return false, err
	}
	peers := conn.ConnectionState().PeerCertificates
	return len(peers) > 0 && bytes.Equal(peers[0].Raw, want.Raw), nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
