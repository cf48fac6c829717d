package metricsendpoint

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestFlagDefaultsServeHTTPSWithAuthentication(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var o Options
	o.BindFlags(fs, "alm-metrics-reader")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.BindAddress != ":8443" || !o.Secure || o.CertDir != "" {
		t.Fatalf("defaults %+v: want :8443, secure, no cert dir", o)
	}
	s := o.Server()
	if !s.SecureServing || s.FilterProvider == nil {
		t.Errorf("default server options: SecureServing %v, filter %v: want HTTPS with authentication and authorization", s.SecureServing, s.FilterProvider != nil)
	}
	cfg := &tls.Config{}
	for _, opt := range s.TLSOpts {
		opt(cfg)
	}
	if strings.Join(cfg.NextProtos, ",") != "http/1.1" {
		t.Errorf("TLS NextProtos %v: want http/1.1 only", cfg.NextProtos)
	}
	if usage := fs.Lookup("metrics-secure").Usage; !strings.Contains(usage, "alm-metrics-reader") || !strings.Contains(usage, "--metrics-secure=false") {
		t.Errorf("--metrics-secure's help names neither the reader role nor how to turn it off: %s", usage)
	}
}

func TestPlainHTTPOnlyWhenAsked(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var o Options
	o.BindFlags(fs, "alm-metrics-reader")
	if err := fs.Parse([]string{"--metrics-secure=false", "--metrics-bind-address=127.0.0.1:8080"}); err != nil {
		t.Fatal(err)
	}
	s := o.Server()
	if s.SecureServing || s.FilterProvider != nil || !o.Open() {
		t.Errorf("--metrics-secure=false: SecureServing %v, filter %v, Open %v: want plain HTTP, reported open", s.SecureServing, s.FilterProvider != nil, o.Open())
	}
	if (Options{BindAddress: "0"}).Open() {
		t.Errorf("a disabled endpoint is reported open")
	}
}

func TestValidate(t *testing.T) {
	full, empty := t.TempDir(), t.TempDir()
	for _, name := range []string{CertName, KeyName} {
		if err := os.WriteFile(filepath.Join(full, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string // part of the error; empty: valid
	}{
		{"self-signed", Options{Secure: true}, ""},
		{"plain", Options{}, ""},
		{"cert dir", Options{Secure: true, CertDir: full}, ""},
		{"cert dir without files", Options{Secure: true, CertDir: empty}, "it must hold tls.crt and tls.key"},
		{"cert dir with plain HTTP", Options{CertDir: full}, "--metrics-secure=false serves plain HTTP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate(%+v) = %v, want %q", tc.o, err, tc.want)
			}
			if s := tc.o.Server(); tc.want == "" && tc.o.CertDir != "" && (s.CertDir != full || s.CertName != CertName || s.KeyName != KeyName) {
				t.Errorf("server options %s/%s,%s: want %s/%s,%s", s.CertDir, s.CertName, s.KeyName, full, CertName, KeyName)
			}
		})
	}
}

// With --metrics-cert-dir, the endpoint presents that certificate (e.g. cert-manager's), not a self-signed one.
func TestCertDirIsServed(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("alm-manager-metrics.alm-system.svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{CertName: certPEM, KeyName: keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{BindAddress: "127.0.0.1:0", Secure: true, CertDir: dir}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	// The filter asks the API server only when a request comes; the handshake needs none.
	srv, err := metricsserver.NewServer(o.Server(), &rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		addr = srv.(interface{ GetBindAddr() string }).GetBindAddr()
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	block, _ := pem.Decode(certPEM)
	if got := conn.ConnectionState().PeerCertificates; len(got) == 0 || !bytes.Equal(got[0].Raw, block.Bytes) {
		t.Errorf("the endpoint presents %d certificates, not the one in --metrics-cert-dir", len(got))
	}
	if proto := conn.ConnectionState().NegotiatedProtocol; proto == "h2" {
		t.Errorf("negotiated %s: want HTTP/1.1 only", proto)
	}
}
