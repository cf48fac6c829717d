package konnect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// EntityType is a kind of Konnect entity.
type EntityType string

// The Konnect entity types the operator manages.
const (
	TypeControlPlane EntityType = "control plane"
	TypeService      EntityType = "service"
	TypeRoute        EntityType = "route"
	TypeConsumer     EntityType = "consumer"
)

// Entity is one Konnect entity as Konnect returned it: its ID and its JSON body decoded into a map, so that drift
// detection compares every kind the same way.
type Entity struct {
	ID   string
	Body map[string]any
}

// API is everything the operator asks of Konnect. It is the only side effect of the reconcilers besides the
// Kubernetes API, so tests can swap it. Bodies are Konnect's JSON (field names as in Konnect's API).
type API interface {
	// OrganizationID returns the organization the token belongs to.
	OrganizationID(ctx context.Context) (string, error)
	// Create creates an entity of type t (in control plane cpID unless t is TypeControlPlane) and returns its ID.
	Create(ctx context.Context, t EntityType, cpID string, body map[string]any) (string, error)
	// Update brings the entity id to body (a full replacement; for control planes a patch).
	Update(ctx context.Context, t EntityType, cpID, id string, body map[string]any) error
	// Delete deletes the entity id. A missing entity is an *APIError with StatusCode 404.
	Delete(ctx context.Context, t EntityType, cpID, id string) error
	// List returns every entity of type t in cpID (every control plane for TypeControlPlane) carrying the identity
	// tag (a label "key:value" for control planes), reading every page. An empty tag lists them all.
	List(ctx context.Context, t EntityType, cpID, tag string) ([]Entity, error)
}

// APIError is a Konnect answer that was not a success. It never holds the token.
type APIError struct {
	StatusCode int
	Op         string
	Err        error
}

func (e *APIError) Error() string {
	return fmt.Sprintf("konnect %s: HTTP %d: %v", e.Op, e.StatusCode, e.Err)
}

func (e *APIError) Unwrap() error { return e.Err }

// statusCode returns the HTTP status of a failed Konnect call, 0 when Konnect did not answer (network error,
// lost response, timeout).
func statusCode(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// IsNotFound says whether Konnect answered 404.
func IsNotFound(err error) bool { return statusCode(err) == http.StatusNotFound }

// IsConflict says whether Konnect answered 409 (e.g. a unique name already taken).
func IsConflict(err error) bool { return statusCode(err) == http.StatusConflict }

// IsUnauthorized says whether Konnect rejected the token.
func IsUnauthorized(err error) bool {
	code := statusCode(err)
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}

// isPermanent says whether retrying the same request cannot help: a 4xx other than 408, 409 and 429. Everything
// else (no answer, 5xx, 429) is transient and retried with backoff.
func isPermanent(err error) bool {
	code := statusCode(err)
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusConflict && code != http.StatusTooManyRequests
}
