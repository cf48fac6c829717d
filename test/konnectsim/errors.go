package konnectsim

import (
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/coreentities"
	"github.com/almproject/alm/test/konnectsim/internal/platform"
	"github.com/almproject/alm/test/konnectsim/internal/store"
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
//
// Package platform writes the first, package coreentities the second; the
// request pipeline answers its own errors (401, injected 5xx) in the dialect
// of the endpoint.

// family says which error dialect an endpoint speaks.
type family int

const (
	platformAPI family = iota
	coreAPI
	// legacyAPI: the older platform operations (data plane client certificates) whose errors are application/json
	// {message} (the document's KonnectCPLegacy* errors; sdkerrors.KonnectCPLegacyBadRequestError ...).
	legacyAPI
)

func (s *Server) writeUnauthorized(w http.ResponseWriter, fam family) {
	switch fam {
	case coreAPI:
		coreentities.WriteUnauthorized(w)
	case legacyAPI:
		platform.WriteLegacyError(w, http.StatusUnauthorized, "Unauthorized")
	default:
		s.platform.WriteUnauthorized(w)
	}
}

// writeFault answers an injected failure with status as Konnect answers that status, in the endpoint's dialect: 401
// and 429 (with Retry-After: 1) as authentication and the rate limit do; 400 as a validation error (a core entity
// "validation error" with code 3, a platform problem with invalid_parameters); 403, 404, 409 and 5xx with the
// dialect's error body (core entities: Kong's {code, message} with the matching gRPC code).
func (s *Server) writeFault(w http.ResponseWriter, fam family, status int) {
	switch {
	case status == http.StatusUnauthorized:
		s.writeUnauthorized(w, fam)
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		s.writeRateLimited(w, fam)
	case fam == coreAPI:
		coreentities.WriteError(w, status)
	case fam == legacyAPI:
		platform.WriteLegacyError(w, status, http.StatusText(status))
	default:
		s.platform.WriteError(w, status)
	}
}

// writeRateLimited answers 429 in the endpoint's dialect (Retry-After is already set): the platform APIs' is the
// document's RateLimited problem (sdkerrors.RateLimited), the others Kong's rate limiting plugin's {message}.
func (s *Server) writeRateLimited(w http.ResponseWriter, fam family) {
	if fam == platformAPI {
		s.platform.WriteRateLimited(w)
		return
	}
	store.WriteJSON(w, http.StatusTooManyRequests, "application/json", map[string]any{"message": "API rate limit exceeded"})
}
