// Package konnectapi is the operator's side of Kong Konnect: the small API interface the reconcilers use, its
// implementation with Kong's sdk-konnect-go (mapping Konnect's JSON bodies to the SDK's models), the HTTP transport
// under it (a rate limit per organization, 429 answers retried after Retry-After) and the ClientFactory that hands
// out one client per KonnectAPIAuthConfiguration.
package konnectapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	// TypeConsumerGroup is a consumer group; its members are kept apart (ConsumerGroupsOf and the calls after it).
	TypeConsumerGroup EntityType = "consumer group"
	// TypePlugin is a plugin, global in its control plane or scoped by its body's service, route, consumer or
	// consumer_group.
	TypePlugin EntityType = "plugin"
)

// Entity is one Konnect entity as Konnect returned it: its ID and its JSON body decoded into a map, so that drift
// detection compares every kind the same way.
type Entity struct {
	ID   string
	Body map[string]any
}

// CredentialType is a kind of consumer credential (a Kong auth plugin's credential).
type CredentialType string

// The credential types, named as Kong Ingress Controller's konghq.com/credential Secret label names them.
const (
	CredentialBasicAuth CredentialType = "basic-auth"
	CredentialKeyAuth   CredentialType = "key-auth"
	CredentialACL       CredentialType = "acl"
	CredentialJWT       CredentialType = "jwt"
	CredentialHMACAuth  CredentialType = "hmac-auth"
)

// CredentialTypes are every credential type, in a fixed order.
var CredentialTypes = []CredentialType{CredentialBasicAuth, CredentialKeyAuth, CredentialACL, CredentialJWT, CredentialHMACAuth}

// generatedFields are the fields Konnect generates for a credential of a type when a write leaves them out.
var generatedFields = map[CredentialType][]string{
	CredentialKeyAuth: {"key"}, CredentialJWT: {"key", "secret"}, CredentialHMACAuth: {"secret"},
}

// MissingGenerated lists the fields Konnect generates for a credential of type t that body leaves out.
func MissingGenerated(t CredentialType, body map[string]any) []string {
	var missing []string
	for _, f := range generatedFields[t] {
		if _, ok := body[f]; !ok {
			missing = append(missing, f)
		}
	}
	return missing
}

// KeepGenerated returns body with current's values of the generated fields body leaves out (MissingGenerated). An
// update of a credential is a PUT, which replaces it whole: without them Konnect would generate new ones, and a new
// JWT or HMAC secret breaks every client signing with the old one.
func KeepGenerated(t CredentialType, body, current map[string]any) map[string]any {
	missing := MissingGenerated(t, body)
	if len(missing) == 0 {
		return body
	}
	body = maps.Clone(body)
	for _, f := range missing {
		if v, ok := current[f]; ok && v != nil {
			body[f] = v
		}
	}
	return body
}

// API is everything the operator asks of Konnect. It is the only side effect of the reconcilers besides the
// Kubernetes API, so tests can swap it. Bodies are Konnect's JSON (field names as in Konnect's API).
type API interface {
	// OrganizationID returns the organization the token belongs to.
	OrganizationID(ctx context.Context) (string, error)
	// Create creates an entity of type t (in control plane cpID unless t is TypeControlPlane) and returns it as
	// Konnect answered.
	Create(ctx context.Context, t EntityType, cpID string, body map[string]any) (Entity, error)
	// Update brings the entity id to body (a full replacement; for control planes a patch) and returns it as
	// Konnect answered.
	Update(ctx context.Context, t EntityType, cpID, id string, body map[string]any) (Entity, error)
	// GetControlPlane returns the control plane id. A missing one is an *APIError with StatusCode 404.
	GetControlPlane(ctx context.Context, id string) (Entity, error)
	// Get returns the entity id of type t (in control plane cpID unless t is TypeControlPlane), for spec.adopt. A
	// missing one is an *APIError with StatusCode 404.
	Get(ctx context.Context, t EntityType, cpID, id string) (Entity, error)
	// Delete deletes the entity id. A missing entity is an *APIError with StatusCode 404.
	Delete(ctx context.Context, t EntityType, cpID, id string) error
	// List returns every entity of type t in cpID (every control plane for TypeControlPlane) carrying the identity
	// tag (a label "key:value" for control planes), reading every page. An empty tag lists them all.
	List(ctx context.Context, t EntityType, cpID, tag string) ([]Entity, error)

	// GroupMembers returns the IDs of the members of the control plane group groupID, reading every page.
	GroupMembers(ctx context.Context, groupID string) ([]string, error)
	// SetGroupMembers makes ids the exact member list of the control plane group groupID.
	SetGroupMembers(ctx context.Context, groupID string, ids []string) error

	// Credentials returns the credentials of type t of consumer consumerID carrying tag, reading every page.
	Credentials(ctx context.Context, t CredentialType, cpID, consumerID, tag string) ([]Entity, error)
	// CreateCredential creates a credential of type t for consumer consumerID and returns its ID.
	CreateCredential(ctx context.Context, t CredentialType, cpID, consumerID string, body map[string]any) (string, error)
	// UpdateCredential replaces the credential id with body.
	UpdateCredential(ctx context.Context, t CredentialType, cpID, consumerID, id string, body map[string]any) error
	// DeleteCredential deletes the credential id. A missing one is an *APIError with StatusCode 404.
	DeleteCredential(ctx context.Context, t CredentialType, cpID, consumerID, id string) error

	// ConsumerGroupsOf returns the consumer groups the consumer consumerID is in, reading every page.
	ConsumerGroupsOf(ctx context.Context, cpID, consumerID string) ([]Entity, error)
	// ConsumersOfGroup returns the consumers in the consumer group groupID, reading every page.
	ConsumersOfGroup(ctx context.Context, cpID, groupID string) ([]Entity, error)
	// AddToConsumerGroup makes the consumer a member of the consumer group groupID.
	AddToConsumerGroup(ctx context.Context, cpID, consumerID, groupID string) error
	// RemoveFromConsumerGroup ends the consumer's membership of groupID. A missing one is an *APIError with
	// StatusCode 404.
	RemoveFromConsumerGroup(ctx context.Context, cpID, consumerID, groupID string) error
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

// IsBadRequest says whether Konnect answered 400 (for core entities also a unique-name violation).
func IsBadRequest(err error) bool { return statusCode(err) == http.StatusBadRequest }

// IsConflict says whether Konnect answered 409 (e.g. a unique name already taken).
func IsConflict(err error) bool { return statusCode(err) == http.StatusConflict }

// IsUnauthorized says whether Konnect rejected the token.
func IsUnauthorized(err error) bool {
	code := statusCode(err)
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}

// IsPermanent says whether retrying the same request cannot help: a 4xx other than 408, 409 and 429. Everything
// else (no answer, 5xx, 429) is transient and retried with backoff.
func IsPermanent(err error) bool {
	code := statusCode(err)
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusConflict && code != http.StatusTooManyRequests
}
