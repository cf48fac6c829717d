package konnectsim

import (
	"net/http"
	"strings"
	"time"
)

// Hold is a request whose change the simulator committed and whose answer it holds back: the client has sent the
// request and waits. A test uses it to act at the one moment that decides whether a client creates twice — the
// entity exists in Konnect, the client does not know it yet — e.g. to kill the client, then Release or Drop the
// answer.
type Hold struct {
	method, path string
	committed    chan struct{}
	decided      chan bool // true: drop the connection
	status       int
	skip         int // matching requests still to let pass
}

// holdTimeout is how long a held answer waits for Release or Drop before its connection is dropped.
const holdTimeout = 2 * time.Minute

// HoldNext holds the answer of the next request matching method and path (see FaultRule; "" matches any) that passes
// authentication, the rate limit and fault injection: the simulator handles it (commits the change), then waits
// until the Hold is released or dropped.
func (s *Server) HoldNext(method, path string) *Hold {
	h := &Hold{method: method, path: path, committed: make(chan struct{}), decided: make(chan bool, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, h)
	return h
}

// Committed is closed once the held request has been handled: its change is in the simulator's state.
func (h *Hold) Committed() <-chan struct{} { return h.committed }

// Status is the HTTP status of the held answer (valid once Committed is closed), e.g. 201 for a create.
func (h *Hold) Status() int { return h.status }

// Release sends the held answer as it was (to a client that may be gone).
func (h *Hold) Release() { h.decide(false) }

// Drop closes the held request's connection without an answer.
func (h *Hold) Drop() { h.decide(true) }

func (h *Hold) decide(drop bool) {
	select {
	case h.decided <- drop:
	default:
	}
}

// holdLocked takes the first pending Hold matching the request, or nil.
func (s *Server) holdLocked(method, path string) *Hold {
	for i, h := range s.holds {
		if (h.method == "" || strings.EqualFold(h.method, method)) && (h.path == "" || h.path == path) {
			if h.skip > 0 {
				h.skip--
				continue
			}
			s.holds = append(s.holds[:i], s.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// serveHeld handles the request into a buffer, tells the test it is committed, and answers as the test decides.
func (s *Server) serveHeld(hold *Hold, w http.ResponseWriter, r *http.Request, handle func(http.ResponseWriter)) {
	rec := &discardWriter{header: http.Header{}}
	handle(rec)
	hold.status = rec.status
	if hold.status == 0 {
		hold.status = http.StatusOK
	}
	close(hold.committed)
	drop := true
	select {
	case drop = <-hold.decided:
	case <-time.After(holdTimeout):
	}
	if drop {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(hold.status)
	_, _ = w.Write(rec.body.Bytes())
}

// HoldAfter is HoldNext for the skip+1-th matching request: the first skip pass unheld.
func (s *Server) HoldAfter(method, path string, skip int) *Hold {
	h := s.HoldNext(method, path)
	s.mu.Lock()
	defer s.mu.Unlock()
	h.skip = skip
	return h
}
