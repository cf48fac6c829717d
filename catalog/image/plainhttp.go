package image

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// RulePlainHTTP: a request over plain HTTP that the client does not allow: only a client with Options.Insecure
// talks plain HTTP, and only to a loopback address (checked on the address dialled). go-containerregistry falls
// back to plain HTTP by itself for loopback, *.local and RFC 1918 registries; this rule stops it, so that
// credentials and content never cross a network in cleartext. Image is the registry's host:port.
const RulePlainHTTP = "plain-http"

// dialFunc dials a network address, as net.Dialer.DialContext does.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// lookupIP resolves a registry's host name for the plain-HTTP check (tests replace it: no name is ever looked up
// in DNS by a test).
var lookupIP = net.DefaultResolver.LookupIPAddr

// plainHTTPGuard is the RoundTripper every Client sends its requests through: https goes to secure; http only when
// insecure is set, and then through plain, which dials nothing but loopback addresses. A redirect or a token realm
// that leads to http:// comes through here too, so no request of a Client — and no credential — travels over plain
// HTTP outside these rules, whatever go-containerregistry decides.
type plainHTTPGuard struct {
	secure, plain http.RoundTripper
	insecure      bool
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
		return nil, &RefusedError{Image: req.URL.Host, Rule: RulePlainHTTP, Detail: fmt.Sprintf("scheme %q is not https", req.URL.Scheme)}
	}
	return nil, &RefusedError{Image: req.URL.Host, Rule: RulePlainHTTP, Detail: "plain HTTP is not allowed: credentials and content " +
		"would cross the network in cleartext (the registry answered only over HTTP, or go-containerregistry fell back to HTTP for " +
		"a private address); serve the registry over TLS (spec.image.caBundle for a private CA), or, for a registry on loopback " +
		"only, set spec.image.insecure (almctl: --insecure)"}
}

// loopbackOnly wraps dial so that it connects only to loopback addresses: a host name is resolved here and every
// address it resolves to must be loopback (a name that also resolves elsewhere is refused, whichever address would
// be tried first); the address dialled is the one checked.
func loopbackOnly(dial dialFunc) dialFunc {
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
				return nil, &RefusedError{Image: addr, Rule: RulePlainHTTP, Detail: fmt.Sprintf("plain HTTP only to a registry on loopback, "+
					"and %s is %s: spec.image.insecure allows plain HTTP only on loopback (localhost, 127.0.0.0/8, ::1); serve the "+
					"registry over TLS (spec.image.caBundle for a private CA)", host, ip)}
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
func guarded(secure *http.Transport, dial dialFunc, insecure bool) http.RoundTripper {
	plain := secure.Clone()
	plain.Proxy = nil
	plain.DialContext = loopbackOnly(dial)
	return &plainHTTPGuard{secure: secure, plain: plain, insecure: insecure}
}
