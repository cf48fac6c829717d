package image

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// wire is a dialer that connects nowhere: each dial is recorded and answered in memory (net.Pipe), and what the
// client sends is classified — a TLS handshake, or a plain-HTTP request, recorded with its Authorization header and
// answered with a Basic challenge (so a client that did talk plain HTTP would then send its credentials).
type wire struct {
	mu    sync.Mutex
	dials []string
	tls   int
	plain []string
}

func (w *wire) dial(_ context.Context, _, addr string) (net.Conn, error) {
	w.mu.Lock()
	w.dials = append(w.dials, addr)
	w.mu.Unlock()
	client, server := net.Pipe()
	go w.serve(server)
	return client, nil
}

func (w *wire) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 0x16 { // a TLS handshake record: answer as a plain-HTTP server does (an error not retried)
		w.mu.Lock()
		w.tls++
		w.mu.Unlock()
		_, _ = io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\n")
		return
	}
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		w.mu.Lock()
		w.plain = append(w.plain, fmt.Sprintf("%s http://%s%s Authorization=%q", req.Method, req.Host, req.URL.Path, req.Header.Get("Authorization")))
		w.mu.Unlock()
		if _, err := io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\n\r\n"); err != nil {
			return
		}
	}
}

// TestPlainHTTPOnlyInsecureAndLoopback: whatever go-containerregistry would do by itself (it falls back to plain
// HTTP for loopback, *.local and RFC 1918 registries), a Client talks plain HTTP only with Options.Insecure and to a
// loopback address. A registry on loopback that speaks only HTTP is refused without Insecure and gets no request;
// registries at private or public addresses, by IP or by a name that resolves there (also one that resolves to
// loopback and elsewhere), with or without Insecure, never see a plain-HTTP request nor the pull credentials: the
// in-memory wire records each dial (an HTTPS attempt, failed at the handshake) and would record any HTTP request.
// Where go-containerregistry falls back to HTTP (RFC 1918 addresses, or Insecure) the fallback is refused by
// RulePlainHTTP; elsewhere it never tries.
func TestPlainHTTPOnlyInsecureAndLoopback(t *testing.T) {
	names := map[string][]string{"registry.internal.test": {"10.1.2.3"}, "rebind.internal.test": {"127.0.0.1", "192.168.7.8"}}
	lookupIP := func(_ context.Context, host string) ([]net.IPAddr, error) {
		var out []net.IPAddr
		for _, ip := range names[host] {
			out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
		}
		if out == nil {
			return nil, fmt.Errorf("test resolver: %s is not a test name", host)
		}
		return out, nil
	}
	reg := newRegistry(t, false, nil)
	img := catalogImage(t, map[string]string{"configs/p/catalog.yaml": "schema: olm.package\nname: p\n"})
	digest := push(t, newClient(t, Options{}), img, reg.ref("catalogs/c:v1"))

	t.Run("loopback registry without insecure", func(t *testing.T) {
		reg.counts.reset()
		c, err := NewClient(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Digest(context.Background(), reg.ref("catalogs/c:v1"))
		if r := asRefused(t, err); r.Rule != RulePlainHTTP || Reason(err) != ReasonRefused || !strings.Contains(err.Error(), "spec.image.insecure") {
			t.Errorf("Digest: %v (rule %s, reason %s), want %s, Refused, naming spec.image.insecure", err, r.Rule, Reason(err), RulePlainHTTP)
		}
		if n := reg.counts.get("ping") + reg.counts.get("manifest HEAD") + reg.counts.get("manifest GET"); n != 0 {
			t.Errorf("the loopback registry got %d plain-HTTP requests from a client without Insecure", n)
		}
		if _, err := newClient(t, Options{}).PullCatalog(context.Background(), reg.ref("catalogs/c:v1"), digest); err != nil {
			t.Errorf("the same pull with Insecure: %v", err)
		}
	})

	rfc1918 := map[string]bool{"10.1.2.3:5000": true, "192.168.7.8": true, "172.16.0.9:443": true}
	for _, host := range []string{"10.1.2.3:5000", "192.168.7.8", "172.16.0.9:443", "203.0.113.7:5000", "registry.internal.test:5000", "rebind.internal.test:5000"} {
		for _, insecure := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s insecure=%v", host, insecure), func(t *testing.T) {
				w := &wire{}
				kc, err := KeychainFromDockerConfigJSON(dockerConfig(host, "alm", "s3cret"))
				if err != nil {
					t.Fatal(err)
				}
				c, err := NewClient(Options{Keychain: kc, Insecure: insecure, Dial: w.dial, LookupIP: lookupIP})
				if err != nil {
					t.Fatal(err)
				}
				ref := host + "/catalogs/c:v1"
				_, err = c.Digest(context.Background(), ref)
				if err == nil {
					t.Fatalf("%s: Digest succeeded on a wire that answers nothing", ref)
				}
				w.mu.Lock()
				defer w.mu.Unlock()
				if len(w.plain) > 0 {
					t.Errorf("%s: plain-HTTP requests reached the wire: %v", ref, w.plain)
				}
				var r *RefusedError
				if (insecure || rfc1918[host]) && (!errors.As(err, &r) || r.Rule != RulePlainHTTP) {
					t.Errorf("%s: %v; want the HTTP fallback refused by %s", ref, err, RulePlainHTTP)
				}
				if len(w.dials) == 0 || w.tls == 0 {
					t.Errorf("%s: dials %v, %d TLS handshakes; want the HTTPS attempt recorded", ref, w.dials, w.tls)
				}
			})
		}
	}
}
