package konnectsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Konnect has two error dialects, and the SDK decodes each differently:
//
//   - The platform APIs (control planes, organizations/me) answer
//     application/problem+json {status, title, instance, detail[,
//     invalid_parameters]}; the SDK turns them into typed errors
//     (sdkerrors.BadRequestError, NotFoundError, ConflictError, ...).
//   - The core entities (services, routes, consumers) are served by the Kong
//     Admin API compatible backend and answer application/json
//     {code, message, details} where code is a gRPC status code; the SDK turns
//     every non-401 error into *sdkerrors.SDKError carrying StatusCode and the
//     raw Body. A 401 is {message, status} (sdkerrors.GatewayUnauthorizedError).

// family says which error dialect an endpoint speaks.
type family int

const (
	platformAPI family = iota
	coreAPI
)

// gRPC status codes used in core entity error bodies.
const (
	codeInvalidArgument = 3
	codeNotFound        = 5
	codeAlreadyExists   = 6
	codeInternal        = 13
)

const errorDetailType = "type.googleapis.com/kong.admin.model.v1.ErrorDetail"

// invalidParameter is one entry of a problem's invalid_parameters.
type invalidParameter struct {
	Field  string `json:"field"`
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
	Reason string `json:"reason"`
}

type problem struct {
	Status            int                `json:"status"`
	Title             string             `json:"title"`
	Type              string             `json:"type,omitempty"`
	Instance          string             `json:"instance"`
	Detail            string             `json:"detail"`
	InvalidParameters []invalidParameter `json:"invalid_parameters,omitempty"`
}

// errorDetail is one entry of a core entity error's details.
type errorDetail struct {
	Type     string   `json:"@type"`
	Kind     string   `json:"type,omitempty"`
	Field    string   `json:"field,omitempty"`
	Messages []string `json:"messages"`
}

type coreError struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Details []errorDetail `json:"details"`
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) writeProblem(w http.ResponseWriter, status int, detail string, params ...invalidParameter) {
	s.mu.Lock()
	trace := s.rnd.Uint64()
	s.mu.Unlock()
	writeJSON(w, status, "application/problem+json", problem{
		Status:            status,
		Title:             http.StatusText(status),
		Instance:          fmt.Sprintf("kong:trace:%d", trace%1e19),
		Detail:            detail,
		InvalidParameters: params,
	})
}

func writeCoreError(w http.ResponseWriter, status, code int, message string, details ...errorDetail) {
	if details == nil {
		details = []errorDetail{}
	}
	for i := range details {
		details[i].Type = errorDetailType
	}
	writeJSON(w, status, "application/json", coreError{Code: code, Message: message, Details: details})
}

// fieldError is a core entity "validation error" on one field.
func fieldError(field string, format string, args ...any) errorDetail {
	return errorDetail{Kind: "ERROR_TYPE_FIELD", Field: field, Messages: []string{fmt.Sprintf(format, args...)}}
}

// entityError is a core entity "validation error" about the entity as a whole.
func entityError(format string, args ...any) errorDetail {
	return errorDetail{Kind: "ERROR_TYPE_ENTITY", Messages: []string{fmt.Sprintf(format, args...)}}
}

func writeValidationError(w http.ResponseWriter, details ...errorDetail) {
	writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "validation error", details...)
}

func writeCoreNotFound(w http.ResponseWriter) {
	writeCoreError(w, http.StatusNotFound, codeNotFound, "not found")
}

// writeUniqueViolation answers a core entity unique constraint violation the
// way Konnect does: 400, code 3, "data constraint error" (see
// Options.CoreEntityConflictStatus for 409).
func (s *Server) writeUniqueViolation(w http.ResponseWriter, field, value string) {
	code := codeInvalidArgument
	if s.conflictSts == http.StatusConflict {
		code = codeAlreadyExists
	}
	writeCoreError(w, s.conflictSts, code, "data constraint error", errorDetail{
		Kind:     "ERROR_TYPE_REFERENCE",
		Field:    field,
		Messages: []string{fmt.Sprintf("%s (type: unique) constraint failed for value '%s': ", field, value)},
	})
}

func (s *Server) writeUnauthorized(w http.ResponseWriter, fam family) {
	if fam == coreAPI {
		writeJSON(w, http.StatusUnauthorized, "application/json", map[string]any{
			"message": "Unauthorized",
			"status":  http.StatusUnauthorized,
		})
		return
	}
	s.writeProblem(w, http.StatusUnauthorized, "Invalid credentials")
}

// writeServerError answers an injected 5xx in the endpoint's dialect.
func (s *Server) writeServerError(w http.ResponseWriter, fam family, status int) {
	if fam == coreAPI {
		writeCoreError(w, status, codeInternal, "internal error")
		return
	}
	s.writeProblem(w, status, "An unexpected error occurred")
}
