package konnectsim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"
)

func ptr[T any](v T) *T { return &v }

// startServer starts a simulator on loopback and stops it when the test ends.
func startServer(t testing.TB, opts Options) *Server {
	t.Helper()
	return StartTest(t, opts)
}

// newSDK returns the real Konnect SDK talking to s with token.
func newSDK(s *Server, token string, extra ...sdkkonnectgo.SDKOption) *sdkkonnectgo.SDK {
	opts := []sdkkonnectgo.SDKOption{
		sdkkonnectgo.WithServerURL(s.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: ptr(token)}),
		sdkkonnectgo.WithClient(s.HTTPClient()),
	}
	return sdkkonnectgo.New(append(opts, extra...)...)
}

func createControlPlane(t testing.TB, sdk *sdkkonnectgo.SDK, name string, labels map[string]string) components.ControlPlane {
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

func createService(t testing.TB, sdk *sdkkonnectgo.SDK, cpID, name string, tags ...string) components.ServiceOutput {
	t.Helper()
	res, err := sdk.Services.CreateService(context.Background(), cpID, components.Service{Name: ptr(name), Host: name + ".example.internal", Tags: tags})
	if err != nil {
		t.Fatalf("CreateService(%s): %v", name, err)
	}
	return *res.Service
}

// sdkStatus returns the HTTP status carried by an SDK error (0 when none).
func sdkStatus(err error) int {
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
	}
	return 0
}

// rawRequest sends a request to the simulator without the SDK.
func rawRequest(t testing.TB, s *Server, method, path, token, body string) (int, http.Header, string) {
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
