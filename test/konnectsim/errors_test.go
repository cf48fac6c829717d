package konnectsim_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

// TestErrorsAsKonnectSendsThem: an injected failure of each status the operator handles is answered as Konnect
// answers it — the simulator's spec check (at Close) holds each answer to Kong's OpenAPI document — and the SDK
// decodes it as it decodes Konnect's: the typed errors the document declares for the platform APIs (a create of a
// control plane), *sdkerrors.SDKError with the status for the core entities (a create of a service; a 401 is
// *sdkerrors.GatewayUnauthorizedError).
func TestErrorsAsKonnectSendsThem(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	platformType := map[int]string{400: "*sdkerrors.BadRequestError", 401: "*sdkerrors.UnauthorizedError",
		403: "*sdkerrors.ForbiddenError", 409: "*sdkerrors.ConflictError", 500: "*sdkerrors.InternalServerError",
		503: "*sdkerrors.ServiceUnavailable"}
	for _, status := range []int{400, 401, 403, 404, 409, 429, 500, 502, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s.FailNext(http.MethodPost, konnectsim.PathControlPlanes, 1, status)
			_, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: fmt.Sprintf("cp-%d", status)})
			if got := simtest.SDKStatus(err); got != status {
				t.Errorf("control plane create: %T %v, want HTTP %d", err, err, status)
			}
			if want := platformType[status]; want != "" && fmt.Sprintf("%T", err) != want {
				t.Errorf("control plane create: %T, want %s", err, want)
			}

			s.FailNext(http.MethodPost, konnectsim.PathServices, 1, status)
			_, err = sdk.Services.CreateService(ctx, cp.ID, components.Service{Host: "example.com"})
			var sdkErr *sdkerrors.SDKError
			var unauthorized *sdkerrors.GatewayUnauthorizedError
			switch {
			case status == http.StatusUnauthorized && !errors.As(err, &unauthorized):
				t.Errorf("service create: %T %v, want *sdkerrors.GatewayUnauthorizedError", err, err)
			case status != http.StatusUnauthorized && (!errors.As(err, &sdkErr) || sdkErr.StatusCode != status):
				t.Errorf("service create: %T %v, want *sdkerrors.SDKError with HTTP %d", err, err, status)
			}
			if err := s.SpecErr(); err != nil {
				t.Error(err)
			}
		})
	}
}
