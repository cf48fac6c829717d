// Package registrynet decides where the connections of an image client may go: the registry's TLS roots (system
// roots plus a CA bundle), no loopback address for a tenant's catalog (ALM's own host), and plain HTTP only when
// asked for and only to a loopback address — checked on the address dialled, whatever go-containerregistry would do by
// itself. catalog/image builds its clients' transports with it.
package registrynet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Rules of the connections Transport refuses, as the refusal names them.
const (
	// RuleLoopback: a connection to a loopback or unspecified address with Options.DenyLoopback.
	RuleLoopback = "loopback"
	// RulePlainHTTP: a request over plain HTTP that the transport does not allow: only with Options.Insecure, and
	// only to a loopback address (checked on the address dialled). go-containerregistry falls back to plain HTTP by
	// itself for loopback, *.local and RFC 1918 registries; this rule stops it, so that credentials and content never
	// cross a network in cleartext.
	RulePlainHTTP = "plain-http"
)

// Options say which connections a transport may make.
type Options struct {
	// CABundle is PEM certificates trusted in addition to the system roots.
	CABundle []byte
	// Insecure allows plain HTTP, to a loopback address only.
	Insecure bool
	// DenyLoopback refuses to connect to a loopback or unspecified address, whatever name, redirect or DNS answer
	// leads there.
	DenyLoopback bool
	// Dial replaces the dialer (tests); DenyLoopback is then the caller's to enforce. The plain-HTTP rules apply all
	// the same.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LookupIP resolves a registry's host name for the plain-HTTP check; nil: the system resolver (tests set it, so
	// that no name is looked up in DNS).
	LookupIP func(ctx context.Context, host string) ([]net.IPAddr, error)
	// Refused makes the error of a refused connection to addr (host:port) by rule, saying why; nil: a plain error.
	Refused func(addr, rule, detail string) error
}

type (
	refuseFunc func(addr, rule, detail string) error
	lookupFunc func(ctx context.Context, host string) ([]net.IPAddr, error)
)

// Transport is an image client's transport: trusting the system roots plus the certificates of opts.CABundle; with
// opts.DenyLoopback never connecting to a loopback or unspecified address; plain HTTP only as opts.Insecure says
// (guarded).
func Transport(opts Options) (http.RoundTripper, error) {
	if opts.LookupIP == nil {
		opts.LookupIP = net.DefaultResolver.LookupIPAddr
	}
	if opts.Refused == nil {
		opts.Refused = func(addr, rule, detail string) error { return fmt.Errorf("%s: refused (%s): %s", addr, rule, detail) }
	}
	base, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("remote.DefaultTransport is not an *http.Transport")
	}
	t := base.Clone()
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if opts.DenyLoopback {
		// Checked on the address dialled, after name resolution: a host name that resolves to 127.0.0.1 is refused too.
		dialer.Control = refuseLoopback(opts.Refused)
	}
	dial := dialer.DialContext
	if opts.Dial != nil {
		dial = opts.Dial
	}
	t.DialContext = dial
	if err := trustCABundle(t, opts.CABundle); err != nil {
		return nil, err
	}
	return guarded(t, dial, opts), nil
}

// trustCABundle makes t trust the certificates of caBundle besides the system roots.
func trustCABundle(t *http.Transport, caBundle []byte) error {
	if len(caBundle) == 0 {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(caBundle) {
		return errors.New("CA bundle: no PEM certificate found")
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return nil
}

// refuseLoopback is a net.Dialer Control that refuses loopback and unspecified addresses.
func refuseLoopback(refused refuseFunc) func(_, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
			return refused(address, RuleLoopback, "a registry on loopback is ALM's own host; only catalogs a cluster admin trusts may use one")
		}
		return nil
	}
}

// dialFunc dials a network address, as net.Dialer.DialContext does.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// plainHTTPGuard is the RoundTripper every Client sends its requests through: https goes to secure; http only when
// insecure is set, and then through plain, which dials nothing but loopback addresses. A redirect or a token realm
// that leads to http:// comes through here too, so no request of a Client — and no credential — travels over plain
// HTTP outside these rules, whatever go-containerregistry decides.
type plainHTTPGuard struct {
	secure, plain http.RoundTripper
	insecure      bool
	refused       refuseFunc
}

// RoundTrip implements http.RoundTripper.
func (g *plainHTTPGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.URL.Scheme == "https":
		return g.secure.RoundTrip(req)
	case req.URL.Scheme == "http" && g.insecure:
		return g.plain.RoundTrip(req)
	}
	if req.Body != nil {
		_ = req.Body.Close() // a RoundTripper closes the body, even when it refuses
	}
	if req.URL.Scheme != "http" {
		return nil, g.refused(req.URL.Host, RulePlainHTTP, fmt.Sprintf("scheme %q is not https", req.URL.Scheme))
	}
	return nil, g.refused(req.URL.Host, RulePlainHTTP, "plain HTTP is not allowed: credentials and content "+
		"would cross the network in cleartext (the registry answered only over HTTP, or go-containerregistry fell back to HTTP for "+
		"a private address); serve the registry over TLS (spec.image.caBundle for a private CA), or, for a registry on loopback "+
		"only, set spec.image.insecure (almctl: --insecure)")
}

// loopbackOnly wraps dial so that it connects only to loopback addresses: a host name is resolved here and every
// address it resolves to must be loopback (a name that also resolves elsewhere is refused, whichever address would
// be tried first); the address dialled is the one checked.
func loopbackOnly(dial dialFunc, lookupIP lookupFunc, refused refuseFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var ips []net.IP
		if ip := net.ParseIP(host); ip != nil {
			ips = []net.IP{ip}
		} else {
			found, err := lookupIP(ctx, host)
			if err != nil {
				return nil, err
			}
			for _, a := range found {
				ips = append(ips, a.IP)
			}
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("%s: no address", host)
		}
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return nil, refused(addr, RulePlainHTTP, fmt.Sprintf("plain HTTP only to a registry on loopback, "+
					"and %s is %s: spec.image.insecure allows plain HTTP only on loopback (localhost, 127.0.0.0/8, ::1); serve the "+
					"registry over TLS (spec.image.caBundle for a private CA)", host, ip))
			}
		}
		var errs []error
		for _, ip := range ips {
			conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// guarded returns the RoundTripper of a Client: secure (the registry transport, whose TLS settings and dialer
// apply to https) behind plainHTTPGuard, with a plain-HTTP copy of it that has no proxy (the address dialled is
// the registry's) and dials only loopback through dial.
func guarded(secure *http.Transport, dial dialFunc, opts Options) http.RoundTripper {
	plain := secure.Clone()
	plain.Proxy = nil
	plain.DialContext = loopbackOnly(dial, opts.LookupIP, opts.Refused)
	return &plainHTTPGuard{secure: secure, plain: plain, insecure: opts.Insecure, refused: opts.Refused}
}
