package coreentities

import (
	"fmt"
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// The core entities are served by the Kong Admin API compatible backend and
// answer application/json {code, message, details} where code is a gRPC
// status code; the SDK turns every non-401 error into *sdkerrors.SDKError
// carrying StatusCode and the raw Body. A 401 is {message, status}
// (sdkerrors.GatewayUnauthorizedError).

// gRPC status codes used in core entity error bodies.
const (
	codeInvalidArgument  = 3
	codeNotFound         = 5
	codeAlreadyExists    = 6
	codePermissionDenied = 7
	codeInternal         = 13
)

const errorDetailType = "type.googleapis.com/kong.admin.model.v1.ErrorDetail"

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

func writeCoreError(w http.ResponseWriter, status, code int, message string, details ...errorDetail) {
	if details == nil {
		details = []errorDetail{}
	}
	for i := range details {
		details[i].Type = errorDetailType
	}
	store.WriteJSON(w, status, "application/json", coreError{Code: code, Message: message, Details: details})
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
// way Konnect does: 400, code 3, "data constraint error" (or 409, see New).
func (a *API) writeUniqueViolation(w http.ResponseWriter, field, value string) {
	code := codeInvalidArgument
	if a.conflictStatus == http.StatusConflict {
		code = codeAlreadyExists
	}
	writeCoreError(w, a.conflictStatus, code, "data constraint error", errorDetail{
		Kind:     "ERROR_TYPE_REFERENCE",
		Field:    field,
		Messages: []string{fmt.Sprintf("%s (type: unique) constraint failed for value '%s': ", field, value)},
	})
}

// WriteInvalidFields answers a request Kong's OpenAPI document rejects as Konnect does: 400 "validation error"
// with one ERROR_TYPE_FIELD detail per field.
func WriteInvalidFields(w http.ResponseWriter, fields []store.InvalidField) {
	details := make([]errorDetail, 0, len(fields))
	for _, f := range fields {
		details = append(details, fieldError(f.Field, "%s", f.Reason))
	}
	writeValidationError(w, details...)
}

// WriteUnauthorized answers 401 as the core entity endpoints do.
func WriteUnauthorized(w http.ResponseWriter) {
	store.WriteJSON(w, http.StatusUnauthorized, "application/json", map[string]any{
		"message": "Unauthorized",
		"status":  http.StatusUnauthorized,
	})
}

// WriteError answers an error status as the core entity endpoints do: Kong's {code, message, details} with the
// gRPC code of the status (a 400 is a "validation error").
func WriteError(w http.ResponseWriter, status int) {
	switch status {
	case http.StatusBadRequest:
		writeValidationError(w, entityError("invalid request"))
	case http.StatusForbidden:
		writeCoreError(w, status, codePermissionDenied, "permission denied")
	case http.StatusNotFound:
		writeCoreNotFound(w)
	case http.StatusConflict:
		writeCoreError(w, status, codeAlreadyExists, "data constraint error")
	default:
		writeCoreError(w, status, codeInternal, "internal error")
	}
}
