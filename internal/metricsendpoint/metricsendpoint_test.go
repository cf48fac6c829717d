package metricsendpoint

import (
	"crypto/tls"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
