package konnectapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// ClientFactory hands out the Konnect API client of an auth configuration. It is the seam tests swap.
type ClientFactory interface {
	// API returns the client for auth and the normalised server URL.
	API(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (API, string, error)
}

// ErrInvalidAuth marks an auth configuration that cannot work as written (bad server URL, Secret without token).
var ErrInvalidAuth = errors.New("invalid KonnectAPIAuthConfiguration")

// readToken returns the token of auth and a version string that changes when it may have changed.
func readToken(ctx context.Context, c client.Reader, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (token, version string, err error) {
	switch auth.Spec.Type {
	case konnectv1alpha1.KonnectAPIAuthTypeToken:
		if auth.Spec.Token == "" {
			return "", "", fmt.Errorf("%w: spec.token is empty", ErrInvalidAuth)
		}
		return auth.Spec.Token, "", nil
	case konnectv1alpha1.KonnectAPIAuthTypeSecretRef:
		ref := auth.Spec.SecretRef
		if ref == nil || ref.Name == "" {
			return "", "", fmt.Errorf("%w: spec.secretRef is missing", ErrInvalidAuth)
		}
		secret := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: SecretNamespace(auth), Name: ref.Name}, secret); err != nil {
			return "", "", fmt.Errorf("reading Secret %s/%s: %w", SecretNamespace(auth), ref.Name, err)
		}
		t := string(secret.Data[konnectv1alpha1.SecretTokenKey])
		if t == "" {
			return "", "", fmt.Errorf("%w: Secret %s/%s has no key %q", ErrInvalidAuth, secret.Namespace, secret.Name, konnectv1alpha1.SecretTokenKey)
		}
		return t, secret.ResourceVersion, nil
	default:
		return "", "", fmt.Errorf("%w: unknown type %q", ErrInvalidAuth, auth.Spec.Type)
	}
}

// SecretNamespace is the namespace of the token Secret of auth (its own by default).
func SecretNamespace(auth *konnectv1alpha1.KonnectAPIAuthConfiguration) string {
	if auth.Spec.SecretRef != nil && auth.Spec.SecretRef.Namespace != "" {
		return auth.Spec.SecretRef.Namespace
	}
	return auth.Namespace
}

// sdkClients caches one SDK client per auth configuration, rebuilt when the configuration or its Secret changes.
// Clients of one organization share one orgGate (rate limit and Retry-After pauses).
type sdkClients struct {
	reader client.Reader
	gates  *gates
	http   *http.Client

	mu    sync.Mutex
	cache map[types.UID]cachedClient
}

type cachedClient struct {
	version   string
	api       API
	serverURL string
}

// NewClientFactory returns the production ClientFactory: sdk-konnect-go clients reading tokens through reader,
// limited to ratePerSecond requests per organization (<= 0: unlimited).
func NewClientFactory(reader client.Reader, ratePerSecond float64) ClientFactory {
	return &sdkClients{
		reader: reader,
		gates:  newGates(ratePerSecond),
		http:   &http.Client{Timeout: requestTimeout},
		cache:  map[types.UID]cachedClient{},
	}
}

func (f *sdkClients) API(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (API, string, error) {
	serverURL, err := NormalizeServerURL(auth.Spec.ServerURL)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidAuth, err)
	}
	token, secretVersion, err := readToken(ctx, f.reader, auth)
	if err != nil {
		return nil, "", err
	}
	// The spec's generation covers token and serverURL; the organization decides which gate to share.
	version := fmt.Sprintf("%d/%s/%s", auth.Generation, secretVersion, auth.Status.OrganizationID)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.cache[auth.UID]; ok && c.version == version {
		return c.api, c.serverURL, nil
	}
	gateKey := "auth/" + string(auth.UID)
	if org := auth.Status.OrganizationID; org != "" {
		gateKey = "org/" + serverURL + "/" + org
	}
	api := newSDKAPI(serverURL, token, f.gates.get(gateKey), f.http)
	f.cache[auth.UID] = cachedClient{version: version, api: api, serverURL: serverURL}
	return api, serverURL, nil
}
