package konnectsim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// A budget is Konnect's rate limit as its API gateway (Kong's rate limiting plugin) enforces it: a number of requests
// per organization per fixed window (calendar-aligned, e.g. per minute), every answer carrying what is left
// (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset in whole seconds; X-RateLimit-Limit-Minute and
// X-RateLimit-Remaining-Minute when the window is a minute), and 429 with Retry-After until the window ends once it
// is spent. It is independent of RateLimit (a token bucket without headers).

// orgWindow counts one organization's requests in the current window.
type orgWindow struct {
	start time.Time
	used  int
}

// SetBudget sets the per-organization budget: limit requests per window (limit <= 0 disables it; window <= 0
// means a minute).
func (s *Server) SetBudget(limit int, window time.Duration) {
	if window <= 0 {
		window = time.Minute
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget, s.budgetWindow = limit, window
	s.windows = map[*store.Org]*orgWindow{}
}

// spendLocked counts a request of o against its budget and sets the rate-limit headers on h; it reports whether
// the budget was already spent, and then the Retry-After.
func (s *Server) spendLocked(o *store.Org, h http.Header) (time.Duration, bool) {
	if s.budget <= 0 {
		return 0, false
	}
	now := time.Now()
	start := now.Truncate(s.budgetWindow)
	w := s.windows[o]
	if w == nil || !w.start.Equal(start) {
		w = &orgWindow{start: start}
		s.windows[o] = w
	}
	reset := start.Add(s.budgetWindow).Sub(now)
	spent := w.used >= s.budget
	if !spent {
		w.used++
	}
	remaining := strconv.Itoa(s.budget - w.used)
	h.Set("RateLimit-Limit", strconv.Itoa(s.budget))
	h.Set("RateLimit-Remaining", remaining)
	h.Set("RateLimit-Reset", retryAfterSeconds(reset))
	if s.budgetWindow == time.Minute {
		h.Set("X-RateLimit-Limit-Minute", strconv.Itoa(s.budget))
		h.Set("X-RateLimit-Remaining-Minute", remaining)
	}
	if spent {
		s.injected.OverBudget++
	}
	return reset, spent
}
