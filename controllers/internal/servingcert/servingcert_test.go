package servingcert

import (
	"bytes"
	"testing"
	"time"
)

// TestRotation: a CA and a serving certificate are kept while valid and renewed once a third of their lifetime is
// left; a renewed CA keeps its predecessor in the caBundle, so certificates it signed stay trusted; a new version
// takes over the CA of the version it replaces while that one is not due.
func TestRotation(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, renewed, err := EnsureCA(nil, nil, "ns/op.v1", now)
	if err != nil || !renewed {
		t.Fatalf("new CA: %v %v", renewed, err)
	}
	hosts := Hosts("op-service", "ns")
	cert, key, err := EnsureServing(nil, ca, hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	serving := map[string][]byte{KeyTLSCert: cert, KeyTLSKey: key}

	later := now.Add(200 * 24 * time.Hour) // serving: 165 of 365 days left; CA: far from due
	if again, renewed, _ := EnsureCA(ca.Data(), nil, "ns/op.v1", later); renewed || !bytes.Equal(again.Cert, ca.Cert) {
		t.Errorf("CA renewed at day 200")
	}
	if c, _, _ := EnsureServing(serving, ca, hosts, later); !bytes.Equal(c, cert) {
		t.Errorf("serving certificate renewed at day 200")
	}
	due := now.Add(250 * 24 * time.Hour) // serving: 115 days left, less than a third
	if c, _, _ := EnsureServing(serving, ca, hosts, due); bytes.Equal(c, cert) {
		t.Errorf("serving certificate not renewed at day 250")
	}
	if c, _, _ := EnsureServing(serving, ca, Hosts("other-service", "ns"), later); bytes.Equal(c, cert) {
		t.Errorf("serving certificate kept for another Service name")
	}

	if next, renewed, _ := EnsureCA(nil, ca.Data(), "ns/op.v2", later); !renewed || !bytes.Equal(next.Cert, ca.Cert) {
		t.Errorf("the new version did not take over the replaced version's CA")
	}

	caDue := now.Add(500 * 24 * time.Hour) // CA: 230 of 730 days left, less than a third
	next, renewed, err := EnsureCA(ca.Data(), nil, "ns/op.v1", caDue)
	if err != nil || !renewed || bytes.Equal(next.Cert, ca.Cert) {
		t.Fatalf("CA not renewed at day 500: %v %v", renewed, err)
	}
	if !bytes.Equal(next.Previous, ca.Cert) || !bytes.Contains(next.Bundle(), ca.Cert) || !bytes.Contains(next.Bundle(), next.Cert) {
		t.Errorf("the renewed CA's bundle does not trust both CAs")
	}
	if c, _, _ := EnsureServing(serving, next, hosts, caDue); bytes.Equal(c, cert) {
		t.Errorf("serving certificate of the old CA kept after the CA was renewed")
	}
	if after, _, _ := EnsureCA(next.Data(), nil, "ns/op.v1", now.Add(CALifetime+time.Hour)); len(after.Previous) != 0 {
		t.Errorf("the expired previous CA is still in the bundle")
	}

	// An upgrade while the replaced version's CA is due: its webhooks trust only that CA and its pods read the same
	// serving Secret, so the new version keeps it until the old version is gone, and renews it then.
	if up, _, _ := EnsureCA(nil, ca.Data(), "ns/op.v2", caDue); !bytes.Equal(up.Cert, ca.Cert) {
		t.Errorf("upgrade at day 500: the new version made a CA the old version's webhooks do not trust")
	}
	if up, renewed, _ := EnsureCA(ca.Data(), ca.Data(), "ns/op.v2", caDue); renewed || !bytes.Equal(up.Cert, ca.Cert) {
		t.Errorf("upgrade at day 500: the new version renewed the CA while the old version still runs (renewed %v)", renewed)
	}
	if gone, _, _ := EnsureCA(ca.Data(), nil, "ns/op.v2", caDue); bytes.Equal(gone.Cert, ca.Cert) || !bytes.Equal(gone.Previous, ca.Cert) {
		t.Errorf("upgrade at day 500: the due CA was not renewed (keeping it as previous) once the old version was gone")
	}
	if expired, _, _ := EnsureCA(nil, ca.Data(), "ns/op.v2", now.Add(CALifetime+time.Hour)); bytes.Equal(expired.Cert, ca.Cert) {
		t.Errorf("the new version took over an expired CA")
	}
}
