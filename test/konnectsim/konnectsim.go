// Package konnectsim is an in-process Kong Konnect API simulator for tests,
// benchmarks and local runs.
//
// It serves, over real HTTP, the parts of the Konnect API that the Konnect
// operator calls through github.com/Kong/sdk-konnect-go v0.50.0:
//
//   - GET /v3/organizations/me
//   - /v2/control-planes: list (page[size], page[number], filter[...], labels), create, get, PATCH, delete
//   - /v2/control-planes/{controlPlaneId}/core-entities/{services,routes,consumers}:
//     list (size, offset, tags, filter[name][...]), create (POST), get, upsert (PUT), delete
//   - /v2/control-planes/{controlPlaneId}/core-entities/services/{serviceId}/routes[/{routeId}]
//   - /v2/control-planes/{controlPlaneId}/core-entities/consumers/{consumerId}/{basic-auth,key-auth,acls,jwt,hmac-auth}[/{id}],
//     and GET .../core-entities/{basic-auths,key-auths,acls,jwts,hmac-auths}[/{id}]
//   - /v2/control-planes/{controlPlaneId}/core-entities/{consumer_groups,plugins}[/{id}]: plugins global or scoped
//     (service, route, consumer, consumer_group ids, which must exist), unique per name and scope, config defaults
//   - .../consumers/{consumerId}/consumer_groups[/{consumerGroupId}] and .../consumer_groups/{consumerGroupId}/consumers[/{consumerId}]
//   - /v2/control-planes/{controlPlaneId}/group-memberships[/add|/remove], group-member-status, group-status
//
// Answers follow Konnect: the same JSON shapes the SDK decodes, server-side
// defaults, the platform APIs' application/problem+json errors and the core
// entities' Kong-style errors, bearer-token authentication with one
// organization per token, and 429 with Retry-After.
//
// Tests steer it with knobs: a rate limit, fault injection (5xx, latency, a
// response lost after the change was committed, a dropped connection),
// per-endpoint request counters, a listing of everything stored and
// out-of-band edits as a person in the Konnect UI would make them.
//
// The simulator only listens on loopback addresses.
//
// This package is the server: routing, authentication, the rate limit, fault
// injection, counters and the admin API. The endpoints' handlers live in
// internal/platform (organizations, control planes, groups) and
// internal/coreentities (services, routes, consumers, credentials, consumer groups, plugins), and the
// state they share in internal/store.
package konnectsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/almproject/alm/test/konnectsim/internal/cloudgateways"
	"github.com/almproject/alm/test/konnectsim/internal/coreentities"
	"github.com/almproject/alm/test/konnectsim/internal/platform"
	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// DefaultToken is the bearer token accepted when Options.Organizations is empty.
const DefaultToken = "kpat_konnectsim_default_token"

// Organization is a Konnect organization and the tokens that authenticate as it.
type Organization struct {
	// ID is the organization's UUID; generated when empty.
	ID string
	// Name is what GET /v3/organizations/me returns; "Simulated Organization" when empty.
	Name string
	// Tokens are the bearer tokens (personal or system account access tokens) of this organization.
	Tokens []string
}

// Options configures a Server. The zero value is usable: one organization
// reachable with DefaultToken, no latency, no faults, no rate limit.
type Options struct {
	// Organizations and their tokens. Empty means one organization with DefaultToken.
	Organizations []Organization
	// ListenOn is the one non-loopback address StartOn may listen on: the local node's (test/localnode), whose pods
	// reach the simulator there. Anything else that reaches the address reaches the simulator too, tokens in plain
	// HTTP, so only a machine's own address belongs here.
	ListenOn string
	// Seed makes ids and random faults reproducible. 0 means 1.
	Seed uint64
	// Latency is added to every request before it is handled.
	Latency time.Duration
	// RateLimit is the sustained number of requests per second each organization
	// may make; above it the simulator answers 429 with Retry-After. 0 disables it.
	RateLimit float64
	// RateLimitBurst is the token bucket size of RateLimit; defaults to RateLimit rounded up (at least 1).
	RateLimitBurst int
	// Budget is Konnect's own kind of rate limit: requests per organization per BudgetWindow (default a minute),
	// with rate-limit headers on every answer (SetBudget). 0 disables it.
	Budget       int
	BudgetWindow time.Duration
	// ErrorRate is the probability that any API request fails with a 500 before
	// it is handled (nothing is committed).
	ErrorRate float64
	// LostResponseRate is the probability that a mutating request (POST, PUT,
	// PATCH, DELETE) is committed but its response is replaced by a 502.
	LostResponseRate float64
	// CoreEntityConflictStatus is the HTTP status of a unique-constraint violation
	// on core entities (two services with one name, two consumers with one
	// username). Konnect answers 400 with {"code":3,"message":"data constraint
	// error",...}, which is the default; set 409 to get a Conflict status with
	// the same body. Control plane name conflicts are always 409.
	CoreEntityConflictStatus int
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)
}

// Server is the simulator. It implements http.Handler; Start serves it on a
// loopback listener. All methods are safe for concurrent use.
type Server struct {
	opts     Options
	mux      *http.ServeMux
	latency  atomic.Int64 // time.Duration
	st       *store.Store
	platform *platform.API
	core     *coreentities.API
	cloud    *cloudgateways.API

	mu        sync.Mutex // guards the knobs below (random draws come from the store)
	limiters  map[*store.Org]*rate.Limiter
	rateLimit float64
	rateBurst int
	// budget and budgetWindow: SetBudget; windows counts each organization's requests in its current window.
	budget       int
	budgetWindow time.Duration
	windows      map[*store.Org]*orgWindow
	errorRate    float64
	lostRate     float64
	faults       []*faultRule
	holds        []*Hold
	throttles    map[*store.Org]*throttle
	counters     map[string]int64
	total        int64
	injected     Injected
	spec         specState // violations of Kong's OpenAPI document (spec.go)
	endpoints    []string  // "METHOD /template" of every endpoint served, in the order registered

	srv      *http.Server
	listener net.Listener
	url      string
	done     chan struct{}
}

// New builds a Server from opts. It does not listen; use Start, or mount it as
// an http.Handler.
func New(opts Options) *Server {
	seed := opts.Seed
	if seed == 0 {
		seed = 1
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	conflictStatus := opts.CoreEntityConflictStatus
	if conflictStatus == 0 {
		conflictStatus = http.StatusBadRequest
	}
	st := store.New(seed, now)
	s := &Server{
		opts:      opts,
		st:        st,
		platform:  platform.New(st),
		core:      coreentities.New(st, conflictStatus),
		limiters:  map[*store.Org]*rate.Limiter{},
		throttles: map[*store.Org]*throttle{},
		counters:  map[string]int64{},
		errorRate: opts.ErrorRate,
		lostRate:  opts.LostResponseRate,
	}
	s.cloud = cloudgateways.New(st, s.platform)
	s.latency.Store(int64(opts.Latency))
	orgs := opts.Organizations
	if len(orgs) == 0 {
		orgs = []Organization{{Tokens: []string{DefaultToken}}}
	}
	for _, o := range orgs {
		s.AddOrganization(o)
	}
	s.setRateLimitLocked(opts.RateLimit, opts.RateLimitBurst)
	s.SetBudget(opts.Budget, opts.BudgetWindow)
	s.mux = s.routes()
	preloadSpec()
	return s
}

// Endpoints returns the endpoints the simulator serves, "METHOD /template" (the keys of Counters), the admin API aside.
func (s *Server) Endpoints() []string { return append([]string(nil), s.endpoints...) }

// AddOrganization adds an organization and its tokens at run time and returns its ID.
func (s *Server) AddOrganization(o Organization) string {
	return s.st.AddOrganization(o.ID, o.Name, o.Tokens).ID
}

// AddToken makes token authenticate as the organization orgID (e.g. a rotated token).
func (s *Server) AddToken(orgID, token string) error { return s.st.AddToken(orgID, token) }

// RevokeToken stops accepting token: its requests get 401 from now on.
func (s *Server) RevokeToken(token string) { s.st.RevokeToken(token) }

// OrganizationID returns the ID of the organization that token authenticates as, or "".
func (s *Server) OrganizationID(token string) string {
	if o := s.st.OrgByToken(token); o != nil {
		return o.ID
	}
	return ""
}

// Start serves the simulator on 127.0.0.1 with a free port.
func (s *Server) Start() error { return s.StartOn("127.0.0.1:0") }

// StartOn serves the simulator on addr, which must be a loopback address (127.0.0.1:8443, [::1]:0,
// localhost:8443) or on Options.ListenOn.
func (s *Server) StartOn(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("konnectsim: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && (s.opts.ListenOn == "" || host != s.opts.ListenOn) {
		return fmt.Errorf("konnectsim: listen address %q is not a loopback address (nor Options.ListenOn)", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("konnectsim: %w", err)
	}
	s.listener = l
	s.url = "http://" + l.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && s.opts.Logf != nil {
			s.opts.Logf("konnectsim: serve: %v", err)
		}
	}()
	return nil
}

// StartTest starts a simulator for a test (or benchmark) and closes it when the test ends.
func StartTest(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatalf("konnectsim: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// URL is the base URL to give the SDK (sdkkonnectgo.WithServerURL), e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return s.url }

// Close stops the listener started by Start and waits for in-flight requests. Its error also lists every exchange
// that broke Kong's OpenAPI document (SpecErr): a test that closes the simulator fails on it.
func (s *Server) Close() error {
	if s.srv == nil {
		return s.SpecErr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return errors.Join(err, s.SpecErr())
}

// HTTPClient returns an HTTP client for sdkkonnectgo.WithClient that sends
// every request to this simulator (started with Start or StartOn).
//
// The SDK (v0.50.0, internal/hooks/globalurl.go) rewrites the host of a few
// "global" operations, among them GET /v3/organizations/me, to
// global.api.konghq.com whatever server URL it was given. Without this
// client (or an equivalent transport in the operator) those calls would leave
// the machine. Requests for any host are redirected to the simulator.
func (s *Server) HTTPClient() *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Tests hit the simulator from many goroutines: keep their connections.
	base.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: &redirectTransport{target: s.url, base: base}}
}

type redirectTransport struct {
	target string
	base   http.RoundTripper
}

func (t *redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u, err := url.Parse(t.target)
	if err != nil {
		return nil, err
	}
	if req.URL.Host != u.Host || req.URL.Scheme != u.Scheme {
		req = req.Clone(req.Context())
		req.URL.Scheme = u.Scheme
		req.URL.Host = u.Host
		req.Host = u.Host
	}
	return t.base.RoundTrip(req)
}

// SetLatency changes the latency added to every request.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// ServeHTTP implements http.Handler. Every exchange but the admin API's is checked against Kong's OpenAPI document.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, AdminPrefix+"/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	s.serveChecked(w, r)
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
