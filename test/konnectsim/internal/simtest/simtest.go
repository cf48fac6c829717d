// Package simtest holds what the tests of the simulator's packages share: the
// real Konnect SDK pointed at a simulator, a few calls made through it, and
// raw HTTP requests.
package simtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/speccheck"
)

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Err returns the error of a call that also returns a value.
func Err[T any](_ T, err error) error { return err }

// IsUUID reports whether s is a UUID.
func IsUUID(s string) bool { return uuidPattern.MatchString(s) }

// NewSDK returns the real Konnect SDK talking to s with token.
func NewSDK(s *konnectsim.Server, token string, extra ...sdkkonnectgo.SDKOption) *sdkkonnectgo.SDK {
	opts := []sdkkonnectgo.SDKOption{
		sdkkonnectgo.WithServerURL(s.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: Ptr(token)}),
		sdkkonnectgo.WithClient(s.HTTPClient()),
	}
	return sdkkonnectgo.New(append(opts, extra...)...)
}

// CreateControlPlane creates a control plane through sdk and fails the test if it cannot.
func CreateControlPlane(t testing.TB, sdk *sdkkonnectgo.SDK, name string, labels map[string]string) components.ControlPlane {
	t.Helper()
	res, err := sdk.ControlPlanes.CreateControlPlane(context.Background(), components.CreateControlPlaneRequest{Name: name, Labels: labels})
	if err != nil {
		t.Fatalf("CreateControlPlane(%s): %v", name, err)
	}
	if res.StatusCode != http.StatusCreated || res.ControlPlane == nil {
		t.Fatalf("CreateControlPlane(%s): status %d, body %v", name, res.StatusCode, res.ControlPlane)
	}
	return *res.ControlPlane
}

// CreateService creates a service through sdk and fails the test if it cannot.
func CreateService(t testing.TB, sdk *sdkkonnectgo.SDK, cpID, name string, tags ...string) components.ServiceOutput {
	t.Helper()
	res, err := sdk.Services.CreateService(context.Background(), cpID, components.Service{Name: Ptr(name), Host: name + ".example.internal", Tags: tags})
	if err != nil {
		t.Fatalf("CreateService(%s): %v", name, err)
	}
	return *res.Service
}

// SDKStatus returns the HTTP status carried by an SDK error (0 when none).
func SDKStatus(err error) int {
	var (
		sdkErr       *sdkerrors.SDKError
		badRequest   *sdkerrors.BadRequestError
		unauthorized *sdkerrors.UnauthorizedError
		gatewayUnau  *sdkerrors.GatewayUnauthorizedError
		notFound     *sdkerrors.NotFoundError
		conflict     *sdkerrors.ConflictError
		internal     *sdkerrors.InternalServerError
		base         *sdkerrors.BaseError
		unavailable  *sdkerrors.ServiceUnavailable
		forbidden    *sdkerrors.ForbiddenError
		legacyBad    *sdkerrors.KonnectCPLegacyBadRequestError
		legacyAbsent *sdkerrors.KonnectCPLegacyNotFoundError
	)
	switch {
	case errors.As(err, &sdkErr):
		return sdkErr.StatusCode
	case errors.As(err, &badRequest):
		return int(badRequest.Status)
	case errors.As(err, &unauthorized):
		return http.StatusUnauthorized
	case errors.As(err, &gatewayUnau):
		return int(gatewayUnau.Status)
	case errors.As(err, &notFound):
		return http.StatusNotFound
	case errors.As(err, &conflict):
		return http.StatusConflict
	case errors.As(err, &internal):
		return http.StatusInternalServerError
	case errors.As(err, &base):
		return int(base.Status)
	case errors.As(err, &unavailable):
		return http.StatusServiceUnavailable
	case errors.As(err, &forbidden):
		return http.StatusForbidden
	case errors.As(err, &legacyBad):
		return http.StatusBadRequest
	case errors.As(err, &legacyAbsent):
		return http.StatusNotFound
	}
	return 0
}

// ExpectRejected is for a test that sends what Konnect's OpenAPI document rejects on purpose: it takes the
// violations the simulator recorded (so they do not fail the test when it closes) and fails the test unless there
// are want of them, each a request the document rejects (or a path of no operation) and none a wrong answer.
func ExpectRejected(t testing.TB, s *konnectsim.Server, want int) {
	t.Helper()
	got := s.TakeSpecViolations()
	bad := len(got) != want
	for _, v := range got {
		bad = bad || v.Side != speccheck.Request
	}
	if bad {
		t.Errorf("want %d rejected requests, the simulator saw %d violations:", want, len(got))
		for _, v := range got {
			t.Errorf("\t%s", v)
		}
	}
}

// RawRequest sends a request to the simulator without the SDK.
func RawRequest(t testing.TB, s *konnectsim.Server, method, path, token, body string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}
