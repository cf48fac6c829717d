package credentials

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Clients is a ClientFactory whose clients serve the credential entity types (EntityType) with the consumer
// credential calls of the client it wraps; every other call goes to that client unchanged. The scope of a credential
// call (the cpID argument) is konnectapi.InParent(control plane ID, consumer ID).
type Clients struct {
	konnectapi.ClientFactory
}

// API returns the wrapped factory's client for auth, serving the credential entity types.
func (c Clients) API(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (konnectapi.API, string, error) {
	api, serverURL, err := c.ClientFactory.API(ctx, auth)
	if err != nil {
		return nil, serverURL, err
	}
	return consumerScoped{api}, serverURL, nil
}

// consumerScoped serves the credential entity types through the consumer credential calls.
type consumerScoped struct {
	konnectapi.API
}

// scope reads a credential call's scope; ok false when t is not a credential type.
func scope(t konnectapi.EntityType, s string) (ct konnectapi.CredentialType, cpID, consumerID string, ok bool, err error) {
	ct, ok = credentialType(t)
	if !ok {
		return "", "", "", false, nil
	}
	cpID, consumerID = splitScope(s)
	if consumerID == "" {
		return "", "", "", true, fmt.Errorf("%s: no consumer in scope %q", t, s)
	}
	return ct, cpID, consumerID, true, nil
}

func (a consumerScoped) Create(ctx context.Context, t konnectapi.EntityType, s string, body map[string]any) (konnectapi.Entity, error) {
	ct, cpID, consumerID, ok, err := scope(t, s)
	if !ok || err != nil {
		if !ok {
			return a.API.Create(ctx, t, s, body)
		}
		return konnectapi.Entity{}, err
	}
	id, err := a.CreateCredential(ctx, ct, cpID, consumerID, body)
	return konnectapi.Entity{ID: id, Body: body}, err
}

func (a consumerScoped) Update(ctx context.Context, t konnectapi.EntityType, s, id string, body map[string]any) (konnectapi.Entity, error) {
	ct, cpID, consumerID, ok, err := scope(t, s)
	if !ok || err != nil {
		if !ok {
			return a.API.Update(ctx, t, s, id, body)
		}
		return konnectapi.Entity{}, err
	}
	if body, err = a.keepGenerated(ctx, t, s, id, body); err != nil {
		return konnectapi.Entity{}, err
	}
	err = a.UpdateCredential(ctx, ct, cpID, consumerID, id, body)
	return konnectapi.Entity{ID: id, Body: body}, err
}

// keepGenerated keeps the credential's current values of the generated fields body leaves out
// (konnectapi.KeepGenerated). A credential that is gone (deleted out of band) gets new ones: the PUT creates it again.
func (a consumerScoped) keepGenerated(ctx context.Context, t konnectapi.EntityType, s, id string, body map[string]any) (map[string]any, error) {
	ct, _ := credentialType(t)
	if len(konnectapi.MissingGenerated(ct, body)) == 0 {
		return body, nil
	}
	current, err := a.Get(ctx, t, s, id)
	if err != nil {
		if konnectapi.IsNotFound(err) {
			return body, nil
		}
		return nil, err
	}
	return konnectapi.KeepGenerated(ct, body, current.Body), nil
}

func (a consumerScoped) Delete(ctx context.Context, t konnectapi.EntityType, s, id string) error {
	ct, cpID, consumerID, ok, err := scope(t, s)
	if !ok || err != nil {
		if !ok {
			return a.API.Delete(ctx, t, s, id)
		}
		return err
	}
	return a.DeleteCredential(ctx, ct, cpID, consumerID, id)
}

func (a consumerScoped) List(ctx context.Context, t konnectapi.EntityType, s, tag string) ([]konnectapi.Entity, error) {
	ct, cpID, consumerID, ok, err := scope(t, s)
	if !ok || err != nil {
		if !ok {
			return a.API.List(ctx, t, s, tag)
		}
		return nil, err
	}
	return a.Credentials(ctx, ct, cpID, consumerID, tag)
}

// Get finds the credential id among its consumer's credentials of its type (for spec.adopt).
func (a consumerScoped) Get(ctx context.Context, t konnectapi.EntityType, s, id string) (konnectapi.Entity, error) {
	ct, cpID, consumerID, ok, err := scope(t, s)
	if !ok || err != nil {
		if !ok {
			return a.API.Get(ctx, t, s, id)
		}
		return konnectapi.Entity{}, err
	}
	all, err := a.Credentials(ctx, ct, cpID, consumerID, "")
	if err != nil {
		return konnectapi.Entity{}, err
	}
	for _, e := range all {
		if e.ID == id {
			return e, nil
		}
	}
	return konnectapi.Entity{}, &konnectapi.APIError{StatusCode: http.StatusNotFound, Op: "get " + string(t),
		Err: errors.New("the consumer has no such credential")}
}
