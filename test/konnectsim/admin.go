package konnectsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// AdminPrefix is where the simulator's own control API lives, so that tests
// in another process (e2e, `make run`) can use the knobs of the Go API. It
// needs no token and is not counted:
//
//	GET    /_simulator/counters         {"total": n, "endpoints": {"POST /v2/control-planes": n, ...},
//	                                     "injected": {"throttled": n, "server_errors": n, "lost_responses": n}}
//	DELETE /_simulator/counters         reset the counters
//	GET    /_simulator/objects          every stored object (see Object)
//	PATCH  /_simulator/objects/{id}     out-of-band edit (see Server.Edit), body: JSON object
//	DELETE /_simulator/objects/{id}     out-of-band delete (see Server.Remove)
//	POST   /_simulator/faults           add a FaultRule, body: {"method","path","status","probability","times","lost_response","drop_connection"}
//	DELETE /_simulator/faults           remove every fault rule, error rate and lost response rate
//	POST   /_simulator/throttle         body: {"organization_id": "", "requests": n, "retry_after": "2s"}, or
//	                                     {"organization_id": "", "for": "500ms", "retry_after": "1s"} (see ThrottleFor)
//	POST   /_simulator/settings         body: {"latency": "20ms", "error_rate": 0.1, "lost_response_rate": 0.05,
//	                                          "rate_limit": 10, "rate_limit_burst": 20} (fields optional)
const AdminPrefix = "/_simulator"

func (s *Server) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+AdminPrefix+"/counters", func(w http.ResponseWriter, _ *http.Request) {
		store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{
			"total":     s.TotalRequests(),
			"endpoints": s.Counters(),
			"injected":  s.Injected(),
		})
	})
	mux.HandleFunc("DELETE "+AdminPrefix+"/counters", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetCounters()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+AdminPrefix+"/objects", func(w http.ResponseWriter, _ *http.Request) {
		objs := s.Objects()
		if objs == nil {
			objs = []Object{}
		}
		store.WriteJSON(w, http.StatusOK, "application/json", objs)
	})
	mux.HandleFunc("PATCH "+AdminPrefix+"/objects/{id}", func(w http.ResponseWriter, r *http.Request) {
		patch, err := store.ReadObject(r)
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		adminResult(w, s.Edit(r.PathValue("id"), patch))
	})
	mux.HandleFunc("DELETE "+AdminPrefix+"/objects/{id}", func(w http.ResponseWriter, r *http.Request) {
		adminResult(w, s.Remove(r.PathValue("id")))
	})
	mux.HandleFunc("POST "+AdminPrefix+"/faults", func(w http.ResponseWriter, r *http.Request) {
		var f FaultRule
		if err := decodeStrict(r.Body, &f); err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		s.AddFault(f)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE "+AdminPrefix+"/faults", func(w http.ResponseWriter, _ *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+AdminPrefix+"/throttle", s.adminThrottle)
	mux.HandleFunc("POST "+AdminPrefix+"/settings", s.adminSettings)
}

// adminThrottle makes an organization answer its next requests with 429 and a Retry-After.
func (s *Server) adminThrottle(w http.ResponseWriter, r *http.Request) {
	var t struct {
		OrganizationID string `json:"organization_id"`
		Requests       int    `json:"requests"`
		RetryAfter     string `json:"retry_after"`
		For            string `json:"for"`
	}
	if err := decodeStrict(r.Body, &t); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	d := time.Second
	if t.RetryAfter != "" {
		var err error
		if d, err = time.ParseDuration(t.RetryAfter); err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
	}
	if t.For != "" {
		window, err := time.ParseDuration(t.For)
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		s.ThrottleFor(t.OrganizationID, window, d)
	} else {
		s.Throttle(t.OrganizationID, t.Requests, d)
	}
	w.WriteHeader(http.StatusNoContent)
}

// adminSettings changes the latency, error rates and rate limit.
func (s *Server) adminSettings(w http.ResponseWriter, r *http.Request) {
	var set struct {
		Latency          *string  `json:"latency"`
		ErrorRate        *float64 `json:"error_rate"`
		LostResponseRate *float64 `json:"lost_response_rate"`
		RateLimit        *float64 `json:"rate_limit"`
		RateLimitBurst   int      `json:"rate_limit_burst"`
	}
	if err := decodeStrict(r.Body, &set); err != nil {
		adminError(w, http.StatusBadRequest, err)
		return
	}
	if set.Latency != nil {
		d, err := time.ParseDuration(*set.Latency)
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		s.SetLatency(d)
	}
	if set.ErrorRate != nil {
		s.SetErrorRate(*set.ErrorRate)
	}
	if set.LostResponseRate != nil {
		s.SetLostResponseRate(*set.LostResponseRate)
	}
	if set.RateLimit != nil {
		s.SetRateLimit(*set.RateLimit, set.RateLimitBurst)
	}
	w.WriteHeader(http.StatusNoContent)
}

func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, store.MaxBodyBytes))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func adminResult(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		adminError(w, http.StatusNotFound, err)
	case err != nil:
		adminError(w, http.StatusBadRequest, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func adminError(w http.ResponseWriter, status int, err error) {
	store.WriteJSON(w, status, "application/json", map[string]any{"message": err.Error()})
}
