package konnectapi

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// An organization's budget: Konnect's API gateway answers with rate-limit headers (Kong's rate limiting plugin:
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset for the window closest to its limit, and
// X-RateLimit-Limit-Minute and X-RateLimit-Remaining-Minute). The gate paces the organization so that what
// remains of the window lasts until it resets (never faster than --konnect-rate-limit, the ceiling), pauses it when
// nothing remains beyond the requests in flight, and, while requests wait, serves them by priority: deletes and
// creates first, then updates, then reads (drift lists and look-ups).

// Priority orders the requests waiting for an organization's budget.
type Priority int

// Priorities, lowest first.
const (
	PriorityRead Priority = iota
	PriorityUpdate
	PriorityWrite
	priorities
)

// priorityOf is the priority of an HTTP request by its method: DELETE and POST (deletes and creates) before PUT and
// PATCH (updates) before the rest (reads).
func priorityOf(method string) Priority {
	switch method {
	case http.MethodDelete, http.MethodPost:
		return PriorityWrite
	case http.MethodPut, http.MethodPatch:
		return PriorityUpdate
	}
	return PriorityRead
}

// budget is what one answer says about the organization's window: requests remaining and the time until it
// resets (zero when the answer does not say).
type budget struct {
	remaining int
	reset     time.Duration
}

// readBudget reads an answer's rate-limit headers; ok is false when it has none.
func readBudget(h http.Header) (b budget, ok bool) {
	remaining, err := strconv.Atoi(h.Get("RateLimit-Remaining"))
	if err != nil {
		if remaining, err = strconv.Atoi(h.Get("X-RateLimit-Remaining-Minute")); err != nil {
			return budget{}, false
		}
		// A per-minute window without a reset header: Kong's windows are calendar minutes.
		now := time.Now()
		return budget{remaining: max(remaining, 0), reset: now.Truncate(time.Minute).Add(time.Minute).Sub(now)}, true
	}
	b = budget{remaining: max(remaining, 0)}
	if secs, err := strconv.ParseFloat(h.Get("RateLimit-Reset"), 64); err == nil && secs > 0 {
		b.reset = time.Duration(secs * float64(time.Second))
	}
	return b, true
}

// observe adapts the gate to what an answer said about the budget: with nothing left beyond the requests in flight,
// the organization pauses until the window resets; otherwise it is paced so that the rest lasts until then, at most
// at the ceiling.
func (g *orgGate) observe(b budget) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b.reset <= 0 {
		return
	}
	spare := b.remaining - g.inflight
	if spare <= 0 {
		if until := time.Now().Add(b.reset); until.After(g.blockedUntil) {
			g.blockedUntil = until
		}
		return
	}
	limit := rate.Limit(float64(spare) / b.reset.Seconds())
	if g.ceiling > 0 {
		limit = min(limit, rate.Limit(g.ceiling))
	}
	if g.limiter == nil {
		g.limiter = rate.NewLimiter(limit, 1)
		return
	}
	g.limiter.SetLimit(limit)
}

// take waits until a request of priority p may be sent: the organization is not paused, the request is the
// oldest waiting one of the highest priority waiting, and the limiter has a token. It counts the request as in
// flight; done ends that.
func (g *orgGate) take(ctx context.Context, p Priority) (waited time.Duration, err error) {
	start := time.Now()
	w := &waiter{priority: p}
	g.mu.Lock()
	g.queues[p] = append(g.queues[p], w)
	for {
		now := time.Now()
		wait := g.blockedUntil.Sub(now)
		if wait <= 0 && g.headLocked() == w {
			if g.limiter == nil || g.limiter.AllowN(now, 1) {
				g.removeLocked(p, w)
				g.inflight++
				g.mu.Unlock()
				return time.Since(start), nil
			}
			wait = untilToken(g.limiter, now)
		}
		changed := g.changed
		g.mu.Unlock()
		if err := sleep(ctx, wait, changed); err != nil {
			g.mu.Lock()
			g.removeLocked(p, w)
			g.mu.Unlock()
			return time.Since(start), err
		}
		g.mu.Lock()
	}
}

// waiter is one request waiting in take. (Not of size zero: pointers to zero-size values need not differ.)
type waiter struct{ priority Priority }

// done ends a request counted by take.
func (g *orgGate) done() {
	g.mu.Lock()
	g.inflight--
	g.mu.Unlock()
}

// headLocked is the waiter to serve next: the oldest of the highest priority waiting.
func (g *orgGate) headLocked() *waiter {
	for p := priorities - 1; p >= 0; p-- {
		if len(g.queues[p]) > 0 {
			return g.queues[p][0]
		}
	}
	return nil
}

// removeLocked takes w out of the queue of priority p and wakes the others: another may be the head now.
func (g *orgGate) removeLocked(p Priority, w *waiter) {
	if i := slices.Index(g.queues[p], w); i >= 0 {
		g.queues[p] = slices.Delete(g.queues[p], i, i+1)
	}
	g.broadcastLocked()
}

// broadcastLocked wakes every waiter to look again.
func (g *orgGate) broadcastLocked() {
	if g.changed != nil {
		close(g.changed)
	}
	g.changed = make(chan struct{})
}

// untilToken is how long until lim has a token at now.
func untilToken(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	if missing <= 0 || lim.Limit() <= 0 {
		return time.Millisecond
	}
	return time.Duration(math.Ceil(missing / float64(lim.Limit()) * float64(time.Second)))
}

// sleep waits for d (a waiter with a higher priority ahead waits for a change instead: d <= 0), a change, or ctx.
func sleep(ctx context.Context, d time.Duration, changed <-chan struct{}) error {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-changed:
	case <-timer:
	}
	return nil
}
