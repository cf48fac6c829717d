package konnectsim

import (
	"bytes"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// FaultRule injects failures into matching requests. A request that passes
// authentication and the rate limit is checked against the rules in the order
// they were added; the first rule that fires decides.
type FaultRule struct {
	// Method matches the HTTP method; "" matches every method.
	Method string `json:"method,omitempty"`
	// Path matches the route template, e.g. "/v2/control-planes/{controlPlaneId}/core-entities/services"
	// (see the Path* constants); "" matches every endpoint.
	Path string `json:"path,omitempty"`
	// Status is the answered status; 500 when 0 (502 for a lost response).
	Status int `json:"status,omitempty"`
	// Probability that a matching request fails. 0 means every matching request
	// (until Times runs out).
	Probability float64 `json:"probability,omitempty"`
	// Times limits how often the rule fires; 0 means no limit.
	Times int `json:"times,omitempty"`
	// LostResponse lets the request be handled (the change is committed) and
	// then replaces its response by Status, as when a proxy or the network
	// loses the answer.
	LostResponse bool `json:"lost_response,omitempty"`
	// DropConnection closes the connection instead of answering (combined with
	// LostResponse: after the change is committed). Note that Go's HTTP client
	// silently retries a GET whose reused connection was dropped, so such a
	// GET may reach the simulator (and its counter) twice.
	DropConnection bool `json:"drop_connection,omitempty"`
}

type faultRule struct {
	FaultRule
	fired int
}

// AddFault adds a fault injection rule.
func (s *Server) AddFault(f FaultRule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{FaultRule: f})
}

// ClearFaults removes every fault rule and sets ErrorRate and LostResponseRate to 0.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
	s.errorRate = 0
	s.lostRate = 0
}

// FailNext makes the next n requests matching method and path (see FaultRule) answer status (500 when 0).
func (s *Server) FailNext(method, path string, n, status int) {
	s.AddFault(FaultRule{Method: method, Path: path, Times: n, Status: status})
}

// LoseNext commits the next n requests matching method and path and answers them with a 502.
func (s *Server) LoseNext(method, path string, n int) {
	s.AddFault(FaultRule{Method: method, Path: path, Times: n, LostResponse: true})
}

// SetErrorRate sets the probability of a 500 (nothing committed) for every request.
func (s *Server) SetErrorRate(p float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errorRate = p
}

// SetLostResponseRate sets the probability that a mutating request is committed but answered with a 502.
func (s *Server) SetLostResponseRate(p float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lostRate = p
}

// SetRateLimit sets the per-organization rate limit in requests per second (0
// disables it) and its burst (0: rps rounded up).
func (s *Server) SetRateLimit(rps float64, burst int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRateLimitLocked(rps, burst)
}

func (s *Server) setRateLimitLocked(rps float64, burst int) {
	if burst <= 0 {
		burst = max(1, int(math.Ceil(rps)))
	}
	s.rateLimit, s.rateBurst = rps, burst
	clear(s.limiters)
}

type throttle struct {
	remaining  int
	until      time.Time
	retryAfter time.Duration
}

// Throttle answers the next n requests of the organization orgID ("" for
// requests of any organization) with 429 and Retry-After: retryAfter
// (rounded up to whole seconds, at least 1). An unknown orgID has no effect.
func (s *Server) Throttle(orgID string, n int, retryAfter time.Duration) {
	s.setThrottle(orgID, &throttle{remaining: n, retryAfter: retryAfter})
}

// ThrottleFor answers every request of the organization orgID ("" for
// requests of any organization) with 429 and Retry-After: retryAfter for the
// next d, as Konnect does while a client is over its limit. Unlike Throttle,
// a burst lasts a time rather than a number of requests, so that when only a
// few requests are made they are not all throttled, burst after burst. An
// unknown orgID has no effect.
func (s *Server) ThrottleFor(orgID string, d, retryAfter time.Duration) {
	s.setThrottle(orgID, &throttle{until: time.Now().Add(d), retryAfter: retryAfter})
}

// setThrottle installs th for the organization orgID ("" for any); an unknown orgID has no effect.
func (s *Server) setThrottle(orgID string, th *throttle) {
	key := s.st.OrgByID(orgID)
	if key == nil && orgID != "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttles[key] = th
}

// rateLimitedLocked reports whether a request of o must be answered with 429, and the Retry-After.
func (s *Server) rateLimitedLocked(o *store.Org) (time.Duration, bool) {
	for _, key := range []*store.Org{o, nil} {
		if t := s.throttles[key]; t != nil && t.remaining > 0 {
			t.remaining--
			return t.retryAfter, true
		}
		if t := s.throttles[key]; t != nil && time.Now().Before(t.until) {
			return t.retryAfter, true
		}
	}
	if s.rateLimit <= 0 {
		return 0, false
	}
	lim := s.limiters[o]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(s.rateLimit), s.rateBurst)
		s.limiters[o] = lim
	}
	now := time.Now()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, true
	}
	return 0, false
}

// retryAfterSeconds renders a Retry-After header value: whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

type faultDecision struct {
	status int
	lost   bool
	drop   bool
}

func isMutation(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// faultLocked decides whether a request fails.
func (s *Server) faultLocked(method, path string) (faultDecision, bool) {
	for _, f := range s.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, method) || f.Path != "" && f.Path != path {
			continue
		}
		if f.Times > 0 && f.fired >= f.Times {
			continue
		}
		if f.Probability > 0 && s.st.Float64() >= f.Probability {
			continue
		}
		f.fired++
		d := faultDecision{status: f.Status, lost: f.LostResponse, drop: f.DropConnection}
		if d.status == 0 {
			d.status = http.StatusInternalServerError
			if d.lost {
				d.status = http.StatusBadGateway
			}
		}
		return d, true
	}
	if s.errorRate > 0 && s.st.Float64() < s.errorRate {
		return faultDecision{status: http.StatusInternalServerError}, true
	}
	if s.lostRate > 0 && isMutation(method) && s.st.Float64() < s.lostRate {
		return faultDecision{status: http.StatusBadGateway, lost: true}, true
	}
	return faultDecision{}, false
}

// Counters returns the number of requests received per endpoint, keyed
// "METHOD /template" (see the Path* constants), including requests that
// were rejected (401, 429) or failed by fault injection. Requests that match
// no endpoint are counted under "METHOD unmatched".
func (s *Server) Counters() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.counters))
	for k, v := range s.counters {
		out[k] = v
	}
	return out
}

// Count returns the number of requests received by one endpoint ("POST /v2/control-planes").
func (s *Server) Count(endpoint string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters[endpoint]
}

// TotalRequests returns the number of requests received by all endpoints.
func (s *Server) TotalRequests() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// ResetCounters sets every counter to zero (the request counters and the injected-fault counters).
func (s *Server) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.counters)
	s.total = 0
	s.injected = Injected{}
}

// Injected counts the answers the simulator made fail on purpose.
type Injected struct {
	// Throttled: 429 with Retry-After (rate limit, budget or Throttle).
	Throttled int64 `json:"throttled"`
	// OverBudget: of those, answers to requests over the organization's budget (SetBudget).
	OverBudget int64 `json:"over_budget"`
	// ServerErrors: 5xx before anything was committed (error rate, fault rules).
	ServerErrors int64 `json:"server_errors"`
	// LostResponses: committed, then answered with an error (or a dropped connection) instead of the result.
	LostResponses int64 `json:"lost_responses"`
	// Held: committed, then the answer held until the test released or dropped it (HoldNext).
	Held int64 `json:"held"`
}

// Injected returns how many answers failed on purpose since the start (or the last ResetCounters).
func (s *Server) Injected() Injected {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.injected
}

func (s *Server) countInjectedLocked(limited bool, fault faultDecision, faulty bool) {
	switch {
	case limited:
		s.injected.Throttled++
	case faulty && fault.lost:
		s.injected.LostResponses++
	case faulty:
		s.injected.ServerErrors++
	}
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, o *store.Org)

// handle registers h for pattern ("METHOD /template") behind the request
// pipeline: count, latency, authentication, rate limit, fault injection.
func (s *Server) handle(mux *http.ServeMux, pattern string, fam family, handler handlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	s.endpoints = append(s.endpoints, pattern)
	// A request Kong's OpenAPI document rejects is answered 400 as Konnect's validation would, changing nothing.
	h := func(w http.ResponseWriter, r *http.Request, o *store.Org) {
		if invalid := invalidRequest(r); invalid != nil {
			s.writeInvalid(w, fam, invalid)
			return
		}
		handler(w, r, o)
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counters[pattern]++
		s.total++
		s.mu.Unlock()
		s.logf("konnectsim: %s %s", r.Method, r.URL.RequestURI())

		if d := time.Duration(s.latency.Load()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}

		o := s.authenticate(r)
		if o == nil {
			s.writeUnauthorized(w, fam)
			return
		}

		s.mu.Lock()
		retryAfter, limited := s.spendLocked(o, w.Header())
		if !limited {
			retryAfter, limited = s.rateLimitedLocked(o)
		}
		var fault faultDecision
		var faulty bool
		var hold *Hold
		if !limited {
			fault, faulty = s.faultLocked(method, path)
		}
		if !limited && !faulty {
			if hold = s.holdLocked(method, path); hold != nil {
				s.injected.Held++
			}
		}
		s.countInjectedLocked(limited, fault, faulty)
		s.mu.Unlock()

		if hold != nil {
			s.serveHeld(hold, w, r, func(w http.ResponseWriter) { h(w, r, o) })
			return
		}

		if limited {
			w.Header().Set("Retry-After", retryAfterSeconds(retryAfter))
			s.writeRateLimited(w, fam)
			return
		}
		if !faulty {
			h(w, r, o)
			return
		}
		if fault.lost {
			// Commit the change, throw the answer away.
			h(&discardWriter{header: http.Header{}}, r, o)
		}
		if fault.drop {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		s.writeFault(w, fam, fault.status)
	})
}

// authenticate returns the organization of the request's bearer token, or nil.
func (s *Server) authenticate(r *http.Request) *store.Org {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil
	}
	return s.st.OrgByToken(token)
}

// discardWriter swallows a response whose delivery is "lost".
type discardWriter struct {
	header http.Header
	body   bytes.Buffer
	status int
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return d.body.Write(b) }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }
