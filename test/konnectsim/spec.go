package konnectsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/coreentities"
	"github.com/almproject/alm/test/konnectsim/internal/platform"
	"github.com/almproject/alm/test/konnectsim/internal/store"
	"github.com/almproject/alm/test/konnectsim/speccheck"
)

// Every request the simulator receives and every answer it sends (the admin API aside) is checked against Kong's
// OpenAPI document for Konnect, the one the SDK is generated from (package speccheck). A violation is recorded,
// logged, and returned by Close, SpecErr and SpecViolations: StartTest fails the test when the simulator closes.
// A request Konnect would reject is an operator bug; an answer Konnect would not send is a simulator bug; a call of
// an operation of the document the simulator does not serve is a gap the caller depends on.

// maxViolations bounds the violations kept; the rest are only counted.
const maxViolations = 50

// specState is the simulator's record of violations.
type specState struct {
	violations []speccheck.Violation
	dropped    int
	loadErr    error
}

// preloadSpec starts loading the document in the background (once per process), so the first request need not wait.
func preloadSpec() { go func() { _, _ = speccheck.Load() }() }

// serveChecked serves r through the mux and checks the exchange against the document. A request the document
// rejects is answered 400 as Konnect would (invalidRequest), and recorded.
func (s *Server) serveChecked(w http.ResponseWriter, r *http.Request) {
	spec, err := speccheck.Load()
	if err != nil {
		s.mu.Lock()
		s.spec.loadErr = err
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, store.MaxBodyBytes+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	_, pattern := s.mux.Handler(r)
	ctx := context.WithoutCancel(r.Context())
	check := spec.CheckRequest(ctx, r, body, pattern != "/")
	if check.Operation.Method != "" && len(check.Violations) > 0 {
		r = r.WithContext(context.WithValue(r.Context(), invalidKey{}, check.Violations))
	}
	tee := &teeWriter{ResponseWriter: w}
	s.mux.ServeHTTP(tee, r)
	violations := check.Violations
	for i := range violations {
		violations[i].Status = tee.status
	}
	violations = append(violations, check.CheckResponse(ctx, tee.status, w.Header(), tee.body.Bytes())...)
	if len(violations) > 0 {
		s.recordViolations(violations)
	}
}

func (s *Server) recordViolations(violations []speccheck.Violation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range violations {
		s.logf("konnectsim: OpenAPI violation: %s", v)
		if len(s.spec.violations) < maxViolations {
			s.spec.violations = append(s.spec.violations, v)
		} else {
			s.spec.dropped++
		}
	}
}

// invalidKey carries the request's violations to the request pipeline, which answers 400 instead of the handler.
type invalidKey struct{}

// invalidRequest returns the violations of a request the document rejects, nil for a valid one.
func invalidRequest(r *http.Request) []speccheck.Violation {
	v, _ := r.Context().Value(invalidKey{}).([]speccheck.Violation)
	return v
}

// writeInvalid answers a request the document rejects as Konnect answers a validation error, in the endpoint's
// dialect: a core entity "validation error" (code 3) with one detail per field, a platform problem with
// invalid_parameters, or a legacy {message}.
func (s *Server) writeInvalid(w http.ResponseWriter, fam family, violations []speccheck.Violation) {
	var fields []store.InvalidField
	for _, v := range violations {
		name := v.Name
		if v.In == "body" {
			name = strings.ReplaceAll(strings.TrimPrefix(name, "/"), "/", ".")
		}
		fields = append(fields, store.InvalidField{Field: name, Source: v.In, Keyword: v.Keyword, Reason: v.Reason})
	}
	switch fam {
	case coreAPI:
		coreentities.WriteInvalidFields(w, fields)
	case legacyAPI:
		platform.WriteLegacyError(w, http.StatusBadRequest, "Invalid Parameters: "+fields[0].Field+": "+fields[0].Reason)
	default:
		s.platform.WriteInvalidParameters(w, fields)
	}
}

// SpecViolations returns the violations of Kong's OpenAPI document seen so far (at most 50 are kept).
func (s *Server) SpecViolations() []speccheck.Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]speccheck.Violation(nil), s.spec.violations...)
}

// TakeSpecViolations returns the violations seen so far and forgets them: for a test that sends what Konnect
// rejects on purpose, and checks that it is what the simulator saw.
func (s *Server) TakeSpecViolations() []speccheck.Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.spec.violations
	s.spec.violations, s.spec.dropped = nil, 0
	return out
}

// SpecErr is nil when every exchange so far kept to Kong's OpenAPI document, else an error listing the violations
// (or saying why the document could not be loaded).
func (s *Server) SpecErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spec.loadErr != nil {
		return fmt.Errorf("konnectsim: requests were not checked against the OpenAPI document: %w", s.spec.loadErr)
	}
	if len(s.spec.violations) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "konnectsim: %d exchanges broke Kong's OpenAPI document (%s):", len(s.spec.violations)+s.spec.dropped, speccheck.SDKModule)
	for _, v := range s.spec.violations {
		b.WriteString("\n\t" + v.String())
	}
	if s.spec.dropped > 0 {
		fmt.Fprintf(&b, "\n\t... and %d more", s.spec.dropped)
	}
	return errors.New(b.String())
}

// teeWriter passes an answer through and keeps its status and body for the check.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (t *teeWriter) WriteHeader(code int) {
	if t.status == 0 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.NewResponseController reach the connection (DropConnection hijacks it).
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
