// Package platform serves the Konnect platform APIs the operator calls:
// GET /v3/organizations/me, control planes (controlplanes.go) and the
// members of control plane groups (groupmembers.go), with their
// application/problem+json errors.
package platform

import (
	"fmt"
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// object is a stored entity as decoded JSON (see store.Record).
type object = map[string]any

// API serves the platform APIs of the organizations in a store.
type API struct {
	st *store.Store
}

// New returns the platform API over st.
func New(st *store.Store) *API { return &API{st: st} }

// OrganizationsMe serves GET /v3/organizations/me: the organization of the request's token.
func (a *API) OrganizationsMe(w http.ResponseWriter, _ *http.Request, o *store.Org) {
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{
		"id":                    o.ID,
		"name":                  o.Name,
		"owner_id":              o.ID,
		"login_path":            "",
		"created_at":            store.FormatTime(o.CreatedAt),
		"updated_at":            store.FormatTime(o.CreatedAt),
		"state":                 "active",
		"retention_period_days": 30,
	})
}

// The platform APIs answer application/problem+json {status, title,
// instance, detail[, invalid_parameters]}; the SDK turns them into typed
// errors (sdkerrors.BadRequestError, NotFoundError, ConflictError, ...).

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

func (a *API) writeProblem(w http.ResponseWriter, status int, detail string, params ...invalidParameter) {
	trace := a.st.Uint64()
	store.WriteJSON(w, status, "application/problem+json", problem{
		Status:            status,
		Title:             http.StatusText(status),
		Instance:          fmt.Sprintf("kong:trace:%d", trace%1e19),
		Detail:            detail,
		InvalidParameters: params,
	})
}

// WriteUnauthorized answers 401 as the platform APIs do.
func (a *API) WriteUnauthorized(w http.ResponseWriter) {
	a.writeProblem(w, http.StatusUnauthorized, "Invalid credentials")
}

// WriteError answers an error status as the platform APIs do: a problem (a 400 lists an invalid parameter, as
// every Konnect 400 problem does).
func (a *API) WriteError(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusBadRequest:
		a.writeProblem(w, status, "Invalid Parameters", invalidParameter{Field: "body", Rule: "invalid", Source: "body", Reason: "is invalid"})
	case status >= http.StatusInternalServerError:
		a.writeProblem(w, status, "An unexpected error occurred")
	default:
		a.writeProblem(w, status, http.StatusText(status))
	}
}

// WriteRateLimited answers 429 as the platform APIs do: the document's RateLimited problem.
func (a *API) WriteRateLimited(w http.ResponseWriter) {
	trace := a.st.Uint64()
	store.WriteJSON(w, http.StatusTooManyRequests, "application/problem+json", map[string]any{
		"status":   http.StatusTooManyRequests,
		"title":    "Rate Limited",
		"instance": fmt.Sprintf("konnect:trace:%d", trace%1e19),
		"detail":   "Too many requests",
	})
}

// WriteLegacyError answers an error as the older platform operations (data plane client certificates) do:
// application/json {message} (the document's KonnectCPLegacy* errors).
func WriteLegacyError(w http.ResponseWriter, status int, message string) {
	store.WriteJSON(w, status, "application/json", map[string]any{"message": message})
}

// WriteInvalidParameters answers 400 "Invalid Parameters" with one invalid_parameters entry per field.
func (a *API) WriteInvalidParameters(w http.ResponseWriter, fields []store.InvalidField) {
	params := make([]invalidParameter, 0, len(fields))
	for _, f := range fields {
		rule := "invalid"
		if f.Keyword == "required" {
			rule = "required"
		}
		params = append(params, invalidParameter{Field: f.Field, Rule: rule, Source: f.Source, Reason: f.Reason})
	}
	a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", params...)
}
