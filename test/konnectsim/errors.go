package konnectsim

import (
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/coreentities"
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
)

func (s *Server) writeUnauthorized(w http.ResponseWriter, fam family) {
	if fam == coreAPI {
		coreentities.WriteUnauthorized(w)
		return
	}
	s.platform.WriteUnauthorized(w)
}

// writeServerError answers an injected 5xx in the endpoint's dialect.
func (s *Server) writeServerError(w http.ResponseWriter, fam family, status int) {
	if fam == coreAPI {
		coreentities.WriteServerError(w, status)
		return
	}
	s.platform.WriteServerError(w, status)
}
