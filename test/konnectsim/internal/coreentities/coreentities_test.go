package coreentities_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

func TestServiceCRUD(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)

	created, err := sdk.Services.CreateService(ctx, cp.ID, components.Service{
		Name: simtest.Ptr("billing"),
		URL:  simtest.Ptr("https://billing.internal:8443/api"),
		Tags: []string{"k8s-uid:u1"},
	})
	if err != nil {
		t.Fatalf("CreateService: %v", err)
	}
	svc := created.Service
	if created.StatusCode != http.StatusCreated || !simtest.IsUUID(*svc.ID) || *svc.CreatedAt == 0 || *svc.UpdatedAt != *svc.CreatedAt {
		t.Fatalf("created %d %+v", created.StatusCode, svc)
	}
	// url is write-only: it sets protocol, host, port and path.
	if svc.Host != "billing.internal" || *svc.Port != 8443 || *svc.Protocol != components.ServiceProtocolHTTPS || *svc.Path != "/api" {
		t.Errorf("url not split: %+v", svc)
	}

	got, err := sdk.Services.GetService(ctx, *svc.ID, cp.ID)
	if err != nil || *got.Service.Name != "billing" {
		t.Fatalf("GetService: %v %+v", err, got)
	}
	// Kong also finds an entity by name.
	if got, err := sdk.Services.GetService(ctx, "billing", cp.ID); err != nil || *got.Service.ID != *svc.ID {
		t.Fatalf("GetService by name: %v", err)
	}

	up, err := sdk.Services.UpsertService(ctx, operations.UpsertServiceRequest{
		ServiceID: *svc.ID, ControlPlaneID: cp.ID,
		Service: components.Service{Name: simtest.Ptr("billing"), Host: "billing-v2.internal", Port: simtest.Ptr(int64(9000)), Tags: []string{"k8s-uid:u1", "v2"}},
	})
	if err != nil {
		t.Fatalf("UpsertService: %v", err)
	}
	if u := up.Service; u.Host != "billing-v2.internal" || *u.Port != 9000 || u.Path != nil || *u.CreatedAt != *svc.CreatedAt || len(u.Tags) != 2 {
		t.Errorf("upserted %+v (PUT replaces the entity, path must be gone)", u)
	}

	// PUT with a new id creates.
	newID := "5e0b2b5e-8f3a-4a57-9d3e-0a6b6f2f7c11"
	if res, err := sdk.Services.UpsertService(ctx, operations.UpsertServiceRequest{
		ServiceID: newID, ControlPlaneID: cp.ID, Service: components.Service{Name: simtest.Ptr("ledger"), Host: "ledger.internal"},
	}); err != nil || *res.Service.ID != newID {
		t.Fatalf("UpsertService create: %v", err)
	}

	if _, err := sdk.Services.DeleteService(ctx, cp.ID, *svc.ID); err != nil {
		t.Fatalf("DeleteService: %v", err)
	}
	if _, err := sdk.Services.GetService(ctx, *svc.ID, cp.ID); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Fatalf("get after delete: %v, want 404", err)
	}
	if _, err := sdk.Services.DeleteService(ctx, cp.ID, *svc.ID); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Fatalf("delete twice: %v, want 404", err)
	}
}

// Defaults are filled by the server, not only by the SDK (which sends its
// own defaults): check them with a minimal raw body.
func TestServerSideDefaults(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	cp := simtest.CreateControlPlane(t, simtest.NewSDK(s, konnectsim.DefaultToken), "cp", nil)
	base := "/v2/control-planes/" + cp.ID + "/core-entities/"

	status, _, body := simtest.RawRequest(t, s, "POST", base+"services", konnectsim.DefaultToken, `{"name":"a","host":"a.internal"}`)
	if status != http.StatusCreated {
		t.Fatalf("create service: %d %s", status, body)
	}
	var svc map[string]any
	_ = json.Unmarshal([]byte(body), &svc)
	for k, want := range map[string]any{
		"protocol": "http", "port": 80.0, "retries": 5.0, "connect_timeout": 60000.0,
		"read_timeout": 60000.0, "write_timeout": 60000.0, "enabled": true,
	} {
		if svc[k] != want {
			t.Errorf("service %s = %v, want %v", k, svc[k], want)
		}
	}

	status, _, body = simtest.RawRequest(t, s, "POST", base+"routes", konnectsim.DefaultToken, fmt.Sprintf(`{"paths":["/a"],"service":{"id":%q}}`, svc["id"]))
	if status != http.StatusCreated {
		t.Fatalf("create route: %d %s", status, body)
	}
	var route map[string]any
	_ = json.Unmarshal([]byte(body), &route)
	for k, want := range map[string]any{
		"https_redirect_status_code": 426.0, "regex_priority": 0.0, "strip_path": true, "path_handling": "v0",
		"preserve_host": false, "request_buffering": true, "response_buffering": true,
	} {
		if route[k] != want {
			t.Errorf("route %s = %v, want %v", k, route[k], want)
		}
	}
	if fmt.Sprint(route["protocols"]) != "[http https]" {
		t.Errorf("route protocols = %v", route["protocols"])
	}
}

func TestRouteCRUD(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	svc := simtest.CreateService(t, sdk, cp.ID, "svc")

	created, err := sdk.Routes.CreateRoute(ctx, cp.ID, components.CreateRouteRouteJSON(components.RouteJSON{
		Name:    simtest.Ptr("r1"),
		Paths:   []string{"/r1"},
		Methods: []string{"GET"},
		Service: &components.RouteJSONService{ID: svc.ID},
		Tags:    []string{"k8s-uid:r1"},
	}))
	if err != nil {
		t.Fatalf("CreateRoute: %v", err)
	}
	r := created.Route.RouteJSON
	if r == nil || !simtest.IsUUID(*r.ID) || *r.Service.ID != *svc.ID || len(r.Protocols) != 2 || !*r.StripPath {
		t.Fatalf("created %+v", created.Route)
	}

	got, err := sdk.Routes.GetRoute(ctx, *r.ID, cp.ID)
	if err != nil || *got.Route.RouteJSON.Name != "r1" {
		t.Fatalf("GetRoute: %v", err)
	}

	up, err := sdk.Routes.UpsertRoute(ctx, operations.UpsertRouteRequest{
		RouteID: *r.ID, ControlPlaneID: cp.ID,
		Route: components.CreateRouteRouteJSON(components.RouteJSON{Name: simtest.Ptr("r1"), Paths: []string{"/r1", "/r1b"}, Service: &components.RouteJSONService{ID: svc.ID}}),
	})
	if err != nil || len(up.Route.RouteJSON.Paths) != 2 {
		t.Fatalf("UpsertRoute: %v %+v", err, up)
	}

	// Routes nested under their service.
	nested, err := sdk.Routes.CreateRouteWithService(ctx, operations.CreateRouteWithServiceRequest{
		ControlPlaneID: cp.ID, ServiceID: *svc.ID,
		RouteWithoutParents: components.CreateRouteWithoutParentsRouteJSON(components.RouteJSON{Name: simtest.Ptr("r2"), Hosts: []string{"r2.example"}}),
	})
	if err != nil || *nested.Route.RouteJSON.Service.ID != *svc.ID {
		t.Fatalf("CreateRouteWithService: %v", err)
	}
	list, err := sdk.Routes.ListRouteWithService(ctx, operations.ListRouteWithServiceRequest{ControlPlaneID: cp.ID, ServiceID: *svc.ID})
	if err != nil || len(list.Object.Data) != 2 {
		t.Fatalf("ListRouteWithService: %v %+v", err, list)
	}

	// A service that routes reference cannot be deleted (Konnect: 400, data constraint error).
	_, err = sdk.Services.DeleteService(ctx, cp.ID, *svc.ID)
	var sdkErr *sdkerrors.SDKError
	if !errors.As(err, &sdkErr) || sdkErr.StatusCode != http.StatusBadRequest || !strings.Contains(sdkErr.Body, "constraint failed (type: foreign)") {
		t.Fatalf("delete referenced service: %v", err)
	}

	// A route needs an existing service.
	_, err = sdk.Routes.CreateRoute(ctx, cp.ID, components.CreateRouteRouteJSON(components.RouteJSON{
		Paths: []string{"/x"}, Service: &components.RouteJSONService{ID: simtest.Ptr("00000000-0000-4000-8000-000000000000")},
	}))
	if simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Fatalf("route with unknown service: %v", err)
	}

	for _, id := range []string{*r.ID, *nested.Route.RouteJSON.ID} {
		if _, err := sdk.Routes.DeleteRoute(ctx, cp.ID, id); err != nil {
			t.Fatalf("DeleteRoute: %v", err)
		}
	}
	if _, err := sdk.Services.DeleteService(ctx, cp.ID, *svc.ID); err != nil {
		t.Fatalf("DeleteService after its routes: %v", err)
	}
}

func TestConsumerCRUD(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)

	created, err := sdk.Consumers.CreateConsumer(ctx, cp.ID, components.Consumer{Username: simtest.Ptr("alice"), CustomID: simtest.Ptr("a-1"), Tags: []string{"t"}})
	if err != nil || !simtest.IsUUID(*created.Consumer.ID) || *created.Consumer.CreatedAt == 0 {
		t.Fatalf("CreateConsumer: %v %+v", err, created)
	}
	id := *created.Consumer.ID

	if got, err := sdk.Consumers.GetConsumer(ctx, "alice", cp.ID); err != nil || *got.Consumer.ID != id {
		t.Fatalf("GetConsumer by username: %v", err)
	}
	up, err := sdk.Consumers.UpsertConsumer(ctx, operations.UpsertConsumerRequest{
		ConsumerID: id, ControlPlaneID: cp.ID, Consumer: components.Consumer{Username: simtest.Ptr("alice2")},
	})
	if err != nil || *up.Consumer.Username != "alice2" || up.Consumer.CustomID != nil {
		t.Fatalf("UpsertConsumer: %v %+v", err, up)
	}
	list, err := sdk.Consumers.ListConsumer(ctx, operations.ListConsumerRequest{ControlPlaneID: cp.ID, FilterNameEq: simtest.Ptr("alice2")})
	if err != nil || len(list.Object.Data) != 1 {
		t.Fatalf("ListConsumer by name: %v", err)
	}
	if _, err := sdk.Consumers.DeleteConsumer(ctx, cp.ID, id); err != nil {
		t.Fatalf("DeleteConsumer: %v", err)
	}
	if _, err := sdk.Consumers.GetConsumer(ctx, id, cp.ID); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestCoreEntityErrors(t *testing.T) {
	ctx := context.Background()
	type setup struct {
		sdk  *sdkkonnectgo.SDK
		cpID string
	}
	tests := []struct {
		name       string
		opts       konnectsim.Options
		call       func(setup) error
		wantStatus int
		wantBody   string
		rejected   int // requests the document rejects on purpose
	}{
		{
			name: "two services with one name",
			call: func(c setup) error {
				simtest.CreateService(t, c.sdk, c.cpID, "dup")
				_, err := c.sdk.Services.CreateService(ctx, c.cpID, components.Service{Name: simtest.Ptr("dup"), Host: "h"})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `"message":"data constraint error"`,
		},
		{
			name: "two services with one name, 409 configured",
			opts: konnectsim.Options{CoreEntityConflictStatus: http.StatusConflict},
			call: func(c setup) error {
				simtest.CreateService(t, c.sdk, c.cpID, "dup")
				_, err := c.sdk.Services.CreateService(ctx, c.cpID, components.Service{Name: simtest.Ptr("dup"), Host: "h"})
				return err
			},
			wantStatus: http.StatusConflict,
			wantBody:   `name (type: unique) constraint failed`,
		},
		{
			name: "upsert renaming onto an existing name",
			call: func(c setup) error {
				simtest.CreateService(t, c.sdk, c.cpID, "one")
				two := simtest.CreateService(t, c.sdk, c.cpID, "two")
				_, err := c.sdk.Services.UpsertService(ctx, operations.UpsertServiceRequest{ServiceID: *two.ID, ControlPlaneID: c.cpID,
					Service: components.Service{Name: simtest.Ptr("one"), Host: "h"}})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `"field":"name"`,
		},
		{
			name: "two consumers with one username",
			call: func(c setup) error {
				if _, err := c.sdk.Consumers.CreateConsumer(ctx, c.cpID, components.Consumer{Username: simtest.Ptr("bob")}); err != nil {
					return err
				}
				_, err := c.sdk.Consumers.CreateConsumer(ctx, c.cpID, components.Consumer{Username: simtest.Ptr("bob")})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `username (type: unique) constraint failed`,
		},
		{
			name: "two consumers with one custom_id",
			call: func(c setup) error {
				if _, err := c.sdk.Consumers.CreateConsumer(ctx, c.cpID, components.Consumer{CustomID: simtest.Ptr("c1")}); err != nil {
					return err
				}
				_, err := c.sdk.Consumers.CreateConsumer(ctx, c.cpID, components.Consumer{CustomID: simtest.Ptr("c1"), Username: simtest.Ptr("other")})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `custom_id (type: unique)`,
		},
		{
			name: "consumer without username or custom_id",
			call: func(c setup) error {
				_, err := c.sdk.Consumers.CreateConsumer(ctx, c.cpID, components.Consumer{Tags: []string{"x"}})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `"message":"validation error"`,
		},
		{
			name: "service without host",
			call: func(c setup) error {
				_, err := c.sdk.Services.CreateService(ctx, c.cpID, components.Service{Name: simtest.Ptr("nohost")})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `missing properties: 'host'`,
		},
		{
			name: "route without paths, hosts, methods or headers",
			call: func(c setup) error {
				_, err := c.sdk.Routes.CreateRoute(ctx, c.cpID, components.CreateRouteRouteJSON(components.RouteJSON{Name: simtest.Ptr("empty")}))
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `must set one of 'methods', 'hosts', 'headers', 'paths'`,
		},
		{
			name: "tag too long",
			call: func(c setup) error {
				_, err := c.sdk.Services.CreateService(ctx, c.cpID, components.Service{Host: "h", Tags: []string{strings.Repeat("x", 129)}})
				return err
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `"field":"tags[0]"`,
		},
		{
			name: "changes to a Kong Ingress Controller control plane are forbidden",
			call: func(c setup) error {
				kic, err := c.sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{
					Name: "kic", ClusterType: components.CreateControlPlaneRequestClusterTypeClusterTypeK8SIngressController.ToPointer(),
				})
				if err != nil {
					return err
				}
				_, err = c.sdk.Services.CreateService(ctx, kic.ControlPlane.ID, components.Service{Host: "h"})
				return err
			},
			wantStatus: http.StatusForbidden,
			wantBody:   `operation not permitted on KIC cluster`,
		},
		{
			name: "missing service",
			call: func(c setup) error {
				_, err := c.sdk.Services.GetService(ctx, "00000000-0000-4000-8000-000000000000", c.cpID)
				return err
			},
			wantStatus: http.StatusNotFound,
			wantBody:   `"message":"not found"`,
		},
		{
			name: "missing control plane",
			call: func(c setup) error {
				_, err := c.sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: "00000000-0000-4000-8000-000000000000"})
				return err
			},
			wantStatus: http.StatusNotFound,
		},
		{
			name: "size above 1000",
			call: func(c setup) error {
				_, err := c.sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: c.cpID, Size: simtest.Ptr(int64(1001))})
				return err
			},
			wantStatus: http.StatusBadRequest,
			rejected:   1, // the document's maximum
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := konnectsim.StartTest(t, tc.opts)
			sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
			cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
			err := tc.call(setup{sdk: sdk, cpID: cp.ID})
			var sdkErr *sdkerrors.SDKError
			if !errors.As(err, &sdkErr) {
				t.Fatalf("got %T %v, want *sdkerrors.SDKError", err, err)
			}
			if sdkErr.StatusCode != tc.wantStatus || !strings.Contains(sdkErr.Body, tc.wantBody) {
				t.Fatalf("got %d %s, want %d with %s", sdkErr.StatusCode, sdkErr.Body, tc.wantStatus, tc.wantBody)
			}
			simtest.ExpectRejected(t, s, tc.rejected)
		})
	}
}

func TestCoreListPaginationAndFilters(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	for i := range 250 {
		tags := []string{"managed-by:alm", fmt.Sprintf("k8s-uid:%03d", i)}
		if i%5 == 0 {
			tags = append(tags, "team:blue")
		}
		simtest.CreateService(t, sdk, cp.ID, fmt.Sprintf("svc-%03d", i), tags...)
	}

	// Follow the offset cursor across pages.
	var names []string
	var offset *string
	pages := 0
	for {
		res, err := sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID, Size: simtest.Ptr(int64(100)), Offset: offset})
		if err != nil {
			t.Fatalf("ListService: %v", err)
		}
		pages++
		for _, svc := range res.Object.Data {
			names = append(names, *svc.Name)
		}
		if res.Object.Offset == nil {
			if res.Object.Next != nil {
				t.Errorf("last page has next %q", *res.Object.Next)
			}
			break
		}
		offset = res.Object.Offset
	}
	if pages != 3 || len(names) != 250 || !slices.IsSorted(names) || slices.Compact(slices.Clone(names))[249] != "svc-249" {
		t.Fatalf("pages=%d, %d names", pages, len(names))
	}

	tests := []struct {
		name string
		req  operations.ListServiceRequest
		want int
	}{
		{"one tag", operations.ListServiceRequest{Tags: simtest.Ptr("team:blue")}, 50},
		{"all of two tags", operations.ListServiceRequest{Tags: simtest.Ptr("team:blue,k8s-uid:005")}, 1},
		{"any of two tags", operations.ListServiceRequest{Tags: simtest.Ptr("k8s-uid:001/k8s-uid:002")}, 2},
		{"no match", operations.ListServiceRequest{Tags: simtest.Ptr("team:red")}, 0},
		{"name eq", operations.ListServiceRequest{FilterNameEq: simtest.Ptr("svc-042")}, 1},
		{"name contains", operations.ListServiceRequest{FilterNameContains: simtest.Ptr("svc-04")}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.ControlPlaneID = cp.ID
			tc.req.Size = simtest.Ptr(int64(1000))
			res, err := sdk.Services.ListService(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Object.Data) != tc.want {
				t.Fatalf("got %d, want %d", len(res.Object.Data), tc.want)
			}
		})
	}

	// A filtered walk pages over the matches only.
	res, err := sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID, Size: simtest.Ptr(int64(30)), Tags: simtest.Ptr("team:blue")})
	if err != nil || len(res.Object.Data) != 30 || res.Object.Offset == nil {
		t.Fatalf("first filtered page: %v", err)
	}
	res, err = sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID, Size: simtest.Ptr(int64(30)), Tags: simtest.Ptr("team:blue"), Offset: res.Object.Offset})
	if err != nil || len(res.Object.Data) != 20 || res.Object.Offset != nil {
		t.Fatalf("second filtered page: %v %d", err, len(res.Object.Data))
	}
}
