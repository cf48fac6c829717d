package platform_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

func TestOrganizationsMe(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{Organizations: []konnectsim.Organization{
		{Name: "Org A", Tokens: []string{"kpat_a1", "kpat_a2"}},
		{Name: "Org B", Tokens: []string{"spat_b"}},
	}})
	ctx := context.Background()
	for _, tc := range []struct {
		token, wantName string
	}{
		{"kpat_a1", "Org A"},
		{"kpat_a2", "Org A"},
		{"spat_b", "Org B"},
	} {
		t.Run(tc.token, func(t *testing.T) {
			res, err := simtest.NewSDK(s, tc.token).Me.GetOrganizationsMe(ctx)
			if err != nil {
				t.Fatalf("GetOrganizationsMe: %v", err)
			}
			me := res.MeOrganization
			if me == nil || *me.Name != tc.wantName || *me.ID != s.OrganizationID(tc.token) || !simtest.IsUUID(*me.ID) {
				t.Fatalf("got %+v, want org %q with id %s", me, tc.wantName, s.OrganizationID(tc.token))
			}
			if *me.State != components.MeOrganizationStateActive {
				t.Errorf("state = %s, want active", *me.State)
			}
		})
	}
	if a, b := s.OrganizationID("kpat_a1"), s.OrganizationID("spat_b"); a == b {
		t.Errorf("two organizations share the ID %s", a)
	}

	_, err := simtest.NewSDK(s, "kpat_wrong").Me.GetOrganizationsMe(ctx)
	var unauthorized *sdkerrors.UnauthorizedError
	if !errors.As(err, &unauthorized) {
		t.Fatalf("wrong token: got %v, want *sdkerrors.UnauthorizedError", err)
	}
}

// The SDK sends GET /v3/organizations/me to global.api.konghq.com whatever
// server URL it is given; Server.HTTPClient (or an equivalent transport in the
// operator) is needed to keep it local. This test documents the SDK's
// behaviour without letting the request leave the machine.
func TestSDKSendsOrganizationsMeToGlobalHost(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	var hosts []string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		hosts = append(hosts, r.URL.Host)
		return nil, errors.New("blocked by test")
	})}
	sdk := sdkkonnectgo.New(
		sdkkonnectgo.WithServerURL(s.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: simtest.Ptr(konnectsim.DefaultToken)}),
		sdkkonnectgo.WithClient(client),
	)
	_, _ = sdk.Me.GetOrganizationsMe(context.Background())
	_, _ = sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{})
	want := []string{"global.api.konghq.com", strings.TrimPrefix(s.URL(), "http://")}
	if fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Fatalf("hosts = %v, want %v", hosts, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestControlPlaneCRUD(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()

	cp := simtest.CreateControlPlane(t, sdk, "prod", map[string]string{"env": "prod", "k8s-uid": "1234-abcd"})
	if !simtest.IsUUID(cp.ID) || cp.Name != "prod" || cp.Labels["env"] != "prod" {
		t.Fatalf("created %+v", cp)
	}
	// Server-side defaults.
	if cp.Config.ClusterType != components.ControlPlaneClusterTypeClusterTypeControlPlane ||
		cp.Config.AuthType != components.ControlPlaneAuthTypePinnedClientCerts ||
		!strings.HasPrefix(cp.Config.ControlPlaneEndpoint, "https://") ||
		!strings.HasPrefix(cp.Config.TelemetryEndpoint, "https://") ||
		cp.CreatedAt.IsZero() || !cp.UpdatedAt.Equal(cp.CreatedAt) {
		t.Errorf("defaults not filled: %+v", cp)
	}

	got, err := sdk.ControlPlanes.GetControlPlane(ctx, cp.ID)
	if err != nil || got.ControlPlane.ID != cp.ID || got.ControlPlane.Config.ControlPlaneEndpoint != cp.Config.ControlPlaneEndpoint {
		t.Fatalf("GetControlPlane: %v %+v", err, got)
	}

	// PATCH replaces the labels and keeps what it does not mention.
	upd, err := sdk.ControlPlanes.UpdateControlPlane(ctx, cp.ID, components.UpdateControlPlaneRequest{
		Description: simtest.Ptr("production"),
		Labels:      map[string]string{"env": "staging"},
	})
	if err != nil {
		t.Fatalf("UpdateControlPlane: %v", err)
	}
	if u := upd.ControlPlane; u.Name != "prod" || u.Description != "production" || !maps.Equal(u.Labels, map[string]string{"env": "staging"}) {
		t.Errorf("updated %+v", u)
	}

	if _, err := sdk.ControlPlanes.DeleteControlPlane(ctx, cp.ID); err != nil {
		t.Fatalf("DeleteControlPlane: %v", err)
	}
	_, err = sdk.ControlPlanes.GetControlPlane(ctx, cp.ID)
	var notFound *sdkerrors.NotFoundError
	if !errors.As(err, &notFound) {
		t.Fatalf("get after delete: %v, want *sdkerrors.NotFoundError", err)
	}
	_, err = sdk.ControlPlanes.DeleteControlPlane(ctx, cp.ID)
	if !errors.As(err, &notFound) {
		t.Fatalf("second delete: %v, want *sdkerrors.NotFoundError", err)
	}
}

func TestControlPlaneErrors(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	existing := simtest.CreateControlPlane(t, sdk, "taken", nil)

	tests := []struct {
		name  string
		call  func(*sdkkonnectgo.SDK) error
		check func(error) bool
	}{
		{
			name: "duplicate name is 409 Conflict",
			call: func(sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "taken"})
				return err
			},
			check: func(err error) bool { var e *sdkerrors.ConflictError; return errors.As(err, &e) },
		},
		{
			// The SDK has no typed error for a 409 on update: *sdkerrors.SDKError.
			name: "renaming onto another name is 409",
			call: func(sdk *sdkkonnectgo.SDK) error {
				other := simtest.CreateControlPlane(t, sdk, "other", nil)
				_, err := sdk.ControlPlanes.UpdateControlPlane(ctx, other.ID, components.UpdateControlPlaneRequest{Name: simtest.Ptr("taken")})
				return err
			},
			check: func(err error) bool { return simtest.SDKStatus(err) == http.StatusConflict },
		},
		{
			name: "reserved label prefix is 400 with invalid_parameters",
			call: func(sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "xx", Labels: map[string]string{"konnect-owned": "yes"}})
				return err
			},
			check: func(err error) bool {
				var e *sdkerrors.BadRequestError
				return errors.As(err, &e) && e.Status == 400 && len(e.InvalidParameters) == 1 &&
					e.InvalidParameters[0].InvalidParameterStandard != nil &&
					e.InvalidParameters[0].InvalidParameterStandard.Field == "labels.konnect-owned"
			},
		},
		{
			name: "empty label value is 400",
			call: func(sdk *sdkkonnectgo.SDK) error {
				// The document rejects it (minLength, pattern): the simulator answers as Konnect's validation does.
				_, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "xx", Labels: map[string]string{"env": ""}})
				simtest.ExpectRejected(t, s, 2)
				return err
			},
			check: func(err error) bool { var e *sdkerrors.BadRequestError; return errors.As(err, &e) },
		},
		{
			name: "unknown id is 404",
			call: func(sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.ControlPlanes.UpdateControlPlane(ctx, "00000000-0000-4000-8000-000000000000", components.UpdateControlPlaneRequest{Name: simtest.Ptr("yy")})
				return err
			},
			check: func(err error) bool { var e *sdkerrors.NotFoundError; return errors.As(err, &e) },
		},
		{
			name: "page size above 100 is 400",
			call: func(sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{PageSize: simtest.Ptr(int64(101))})
				return err
			},
			check: func(err error) bool { var e *sdkerrors.BadRequestError; return errors.As(err, &e) },
		},
		{
			name: "another organization's control plane is 404",
			call: func(*sdkkonnectgo.SDK) error {
				other := s.AddOrganization(konnectsim.Organization{Name: "Other", Tokens: []string{"kpat_other"}})
				if other == "" {
					return errors.New("no org")
				}
				_, err := simtest.NewSDK(s, "kpat_other").ControlPlanes.GetControlPlane(ctx, existing.ID)
				return err
			},
			check: func(err error) bool { var e *sdkerrors.NotFoundError; return errors.As(err, &e) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(sdk)
			if err == nil || !tc.check(err) {
				t.Fatalf("got error %T %v", err, err)
			}
		})
	}
}

func TestControlPlaneListPaginationAndFilters(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	for i := range 25 {
		labels := map[string]string{"env": "a"}
		if i%2 == 1 {
			labels = map[string]string{"env": "b", "team": "x"}
		}
		simtest.CreateControlPlane(t, sdk, fmt.Sprintf("cp-%02d", i), labels)
	}

	// Walk the pages with the SDK's own pagination (res.Next).
	res, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{PageSize: simtest.Ptr(int64(10))})
	if err != nil {
		t.Fatalf("ListControlPlanes: %v", err)
	}
	var names []string
	pages := 0
	for res != nil {
		pages++
		page := res.ListControlPlanesResponse
		if page.Meta.Page.Total != 25 || page.Meta.Page.Size != 10 || int(page.Meta.Page.Number) != pages {
			t.Errorf("page %d meta = %+v", pages, page.Meta.Page)
		}
		for _, cp := range page.Data {
			names = append(names, cp.Name)
		}
		if res, err = res.Next(); err != nil {
			t.Fatalf("Next: %v", err)
		}
	}
	if pages != 3 || len(names) != 25 || names[0] != "cp-00" || names[24] != "cp-24" {
		t.Fatalf("pages=%d names=%v", pages, names)
	}

	tests := []struct {
		name string
		req  operations.ListControlPlanesRequest
		want int
	}{
		{"label key:value", operations.ListControlPlanesRequest{FilterLabels: simtest.Ptr("env:a")}, 13},
		{"label exists", operations.ListControlPlanesRequest{FilterLabels: simtest.Ptr("team")}, 12},
		{"two labels", operations.ListControlPlanesRequest{FilterLabels: simtest.Ptr("env:b,team:x")}, 12},
		{"label mismatch", operations.ListControlPlanesRequest{FilterLabels: simtest.Ptr("env:a,team:x")}, 0},
		{"name eq", operations.ListControlPlanesRequest{Filter: &components.ControlPlaneFilterParameters{
			Name: &components.ControlPlaneFilterParametersName{Eq: simtest.Ptr("cp-07")}}}, 1},
		{"name contains", operations.ListControlPlanesRequest{Filter: &components.ControlPlaneFilterParameters{
			Name: &components.ControlPlaneFilterParametersName{Contains: simtest.Ptr("cp-1")}}}, 10},
		{"name neq", operations.ListControlPlanesRequest{Filter: &components.ControlPlaneFilterParameters{
			Name: &components.ControlPlaneFilterParametersName{Neq: simtest.Ptr("cp-07")}}}, 24},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.PageSize = simtest.Ptr(int64(100))
			res, err := sdk.ControlPlanes.ListControlPlanes(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.ListControlPlanesResponse.Data); got != tc.want || int(res.ListControlPlanesResponse.Meta.Page.Total) != tc.want {
				t.Fatalf("got %d (total %v), want %d", got, res.ListControlPlanesResponse.Meta.Page.Total, tc.want)
			}
		})
	}
}

func TestDeletingControlPlaneDeletesItsEntities(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	simtest.CreateService(t, sdk, cp.ID, "svc")
	if _, err := sdk.ControlPlanes.DeleteControlPlane(context.Background(), cp.ID); err != nil {
		t.Fatal(err)
	}
	if objs := s.Objects(); len(objs) != 0 {
		t.Fatalf("left behind: %+v", objs)
	}
}
