package konnectapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
)

// The HTTP transport under the SDK: a rate limit per Konnect organization, and 429 answers retried after their
// Retry-After, pausing every client of the organization.

const (
	// max429Retries bounds how often one request waits for Retry-After before the error goes to the workqueue's
	// backoff.
	max429Retries = 5
	// maxRetryAfter caps a Retry-After the server asks for, so a bogus header cannot stall a worker for long.
	maxRetryAfter = 60 * time.Second
	// requestTimeout bounds one HTTP request to Konnect.
	requestTimeout = 30 * time.Second
)

// requestKey carries the requestInfo of an API call through the request context to the doer, which labels each
// HTTP request's metrics with it.
type requestKey struct{}

// requestInfo says what an HTTP request is part of: the server, the operation and the entity type.
type requestInfo struct {
	serverURL, operation, entityType string
}

// operationKey carries an operation type that overrides the call's own (WithOperation).
type operationKey struct{}

// WithOperation labels the Konnect requests made with ctx as operation (e.g. konnectmetrics.OperationAdopt for the
// look-up of an earlier create) instead of their call's verb.
func WithOperation(ctx context.Context, operation string) context.Context {
	return context.WithValue(ctx, operationKey{}, operation)
}

// statusKey carries a *atomic.Int32 through the request context in which the doer records the HTTP status, so that
// errors of every SDK error type map to one APIError with the status code.
type statusKey struct{}

// orgGate holds the client-side limits shared by every client of one Konnect organization: a token bucket (at
// most the ceiling, slower when the server's budget says so), a pause that a 429's Retry-After or an exhausted
// budget imposes on all of them at once (the server's limit is per organization too), and the requests waiting and
// in flight (budget.go).
type orgGate struct {
	ceiling float64 // requests per second, --konnect-rate-limit; <= 0: none

	mu           sync.Mutex
	limiter      *rate.Limiter // nil: unlimited
	blockedUntil time.Time
	queues       [priorities][]*waiter
	inflight     int
	changed      chan struct{} // closed and replaced whenever a waiter may go
}

// wait waits until the organization may be sent a request of priority p, recording how long it waited under
// serverURL: for a pause (a 429's Retry-After, or the budget spent) or for the rate limit. The caller calls done
// once the request is answered.
func (g *orgGate) wait(ctx context.Context, serverURL string, p Priority) error {
	g.mu.Lock()
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	cause := konnectmetrics.CauseRateLimit
	if time.Now().Before(g.blockedUntil) {
		cause = konnectmetrics.CauseRetryAfter
	}
	g.mu.Unlock()
	waited, err := g.take(ctx, p)
	konnectmetrics.ObserveWait(serverURL, cause, waited)
	return err
}

func (g *orgGate) block(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := time.Now().Add(d); until.After(g.blockedUntil) {
		g.blockedUntil = until
	}
}

// gates hands out one orgGate per organization.
type gates struct {
	perSecond float64 // <= 0: unlimited
	burst     int

	mu sync.Mutex
	m  map[string]*orgGate
}

func newGates(perSecond float64) *gates {
	burst := int(perSecond)
	if burst < 1 {
		burst = 1
	}
	return &gates{perSecond: perSecond, burst: burst, m: map[string]*orgGate{}}
}

func (g *gates) get(key string) *orgGate {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gate, ok := g.m[key]; ok {
		return gate
	}
	gate := &orgGate{ceiling: g.perSecond}
	if g.perSecond > 0 {
		gate.limiter = rate.NewLimiter(rate.Limit(g.perSecond), g.burst)
	}
	g.m[key] = gate
	return gate
}

// gatedDoer is the SDK's HTTP client: it waits for the organization's gate, retries a 429 after its Retry-After
// (pausing the whole organization), and records the status code for the caller's error.
type gatedDoer struct {
	base *http.Client
	gate *orgGate
	// pin, when set, is the only host requests may go to. The SDK sends a few "global" operations (among them
	// GET /v3/organizations/me) to Konnect's global host whatever server URL it was given; with a server URL that is
	// not Konnect's (a proxy, a simulator) they must go to that server instead of leaving for the real Konnect.
	pin *url.URL
}

// isKonnectHost says whether host is one of Konnect's own API hosts, where the SDK's global host is right.
func isKonnectHost(host string) bool {
	return strings.HasSuffix(host, ".api.konghq.com") || strings.HasSuffix(host, ".api.konghq.tech")
}

func (d *gatedDoer) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if d.pin != nil && (req.URL.Host != d.pin.Host || req.URL.Scheme != d.pin.Scheme) {
		req = req.Clone(ctx)
		req.URL.Scheme, req.URL.Host, req.Host = d.pin.Scheme, d.pin.Host, d.pin.Host
	}
	info, _ := ctx.Value(requestKey{}).(requestInfo)
	for attempt := 0; ; attempt++ {
		if err := d.gate.wait(ctx, info.serverURL, priorityOf(req.Method)); err != nil {
			return nil, err
		}
		start := time.Now()
		resp, err := d.base.Do(req)
		d.gate.done()
		if err != nil {
			konnectmetrics.ObserveRequest(info.serverURL, info.operation, info.entityType, 0, time.Since(start))
			return nil, err
		}
		konnectmetrics.ObserveRequest(info.serverURL, info.operation, info.entityType, resp.StatusCode, time.Since(start))
		if code, ok := ctx.Value(statusKey{}).(*atomic.Int32); ok {
			code.Store(int32(resp.StatusCode))
		}
		if b, ok := readBudget(resp.Header); ok {
			d.gate.observe(b)
		}
		if resp.StatusCode != http.StatusTooManyRequests || attempt >= max429Retries || (req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		d.gate.block(retryAfter(resp.Header.Get("Retry-After")))
		_ = resp.Body.Close()
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = body
		}
	}
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); a missing or unreadable one means 1s.
func retryAfter(h string) time.Duration {
	d := time.Second
	if secs, err := strconv.Atoi(h); err == nil && secs >= 0 {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	if d < 0 {
		d = 0
	}
	return min(d, maxRetryAfter)
}
