package konnectsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"
	"github.com/Kong/sdk-konnect-go/retry"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

func TestUnauthorized(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	cp := simtest.CreateControlPlane(t, simtest.NewSDK(s, konnectsim.DefaultToken), "cp", nil)
	ctx := context.Background()

	for _, token := range []string{"", "kpat_wrong"} {
		t.Run("token="+token, func(t *testing.T) {
			sdk := simtest.NewSDK(s, token)
			_, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{})
			var unauthorized *sdkerrors.UnauthorizedError
			if !errors.As(err, &unauthorized) {
				t.Errorf("control planes: %T %v, want *sdkerrors.UnauthorizedError", err, err)
			}
			// Core entities answer 401 in the Kong dialect.
			_, err = sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID})
			var gw *sdkerrors.GatewayUnauthorizedError
			if !errors.As(err, &gw) || gw.Status != http.StatusUnauthorized {
				t.Errorf("services: %T %v, want *sdkerrors.GatewayUnauthorizedError", err, err)
			}
		})
	}
	// Nothing was created by the rejected requests.
	if n := len(s.Objects()); n != 1 {
		t.Fatalf("%d objects", n)
	}

	// Token rotation: a new token works, a revoked one gets 401.
	if err := s.AddToken(s.OrganizationID(konnectsim.DefaultToken), "kpat_rotated"); err != nil {
		t.Fatal(err)
	}
	s.RevokeToken(konnectsim.DefaultToken)
	if _, err := simtest.NewSDK(s, "kpat_rotated").ControlPlanes.GetControlPlane(ctx, cp.ID); err != nil {
		t.Fatalf("rotated token: %v", err)
	}
	if _, err := simtest.NewSDK(s, konnectsim.DefaultToken).ControlPlanes.GetControlPlane(ctx, cp.ID); simtest.SDKStatus(err) != http.StatusUnauthorized {
		t.Fatalf("revoked token: %v", err)
	}
}

func TestThrottleAnswers429WithRetryAfter(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{Organizations: []konnectsim.Organization{
		{Name: "A", Tokens: []string{"kpat_a"}},
		{Name: "B", Tokens: []string{"kpat_b"}},
	}})
	ctx := context.Background()
	a, b := simtest.NewSDK(s, "kpat_a"), simtest.NewSDK(s, "kpat_b")
	s.Throttle(s.OrganizationID("kpat_a"), 2, 1500*time.Millisecond)

	for i := range 2 {
		_, err := a.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{})
		var sdkErr *sdkerrors.SDKError
		if !errors.As(err, &sdkErr) || sdkErr.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("request %d: %v, want 429", i, err)
		}
		if got := sdkErr.RawResponse.Header.Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After = %q, want 2 (1.5s rounded up)", got)
		}
	}
	// Organization B is not throttled; A is done with its 429s.
	if _, err := b.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{}); err != nil {
		t.Fatalf("org B: %v", err)
	}
	if _, err := a.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{}); err != nil {
		t.Fatalf("org A after the burst: %v", err)
	}
}

func TestThrottleForAWindow(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	ctx := context.Background()
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	s.ThrottleFor("", 300*time.Millisecond, time.Second)
	// Every request in the window is throttled, however many there are.
	for i := range 3 {
		_, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{})
		var sdkErr *sdkerrors.SDKError
		if !errors.As(err, &sdkErr) || sdkErr.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("request %d: %v, want 429", i, err)
		}
	}
	if got := s.Injected().Throttled; got != 3 {
		t.Errorf("Injected().Throttled = %d, want 3", got)
	}
	// After the window, requests pass again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 5s after a 300ms window: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestInjectedCountsFaults(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	s.FailNext("", "", 2, 0)
	s.LoseNext("POST", konnectsim.PathControlPlanes, 1)
	for range 2 {
		if _, err := sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{}); err == nil {
			t.Fatal("want the injected 500")
		}
	}
	if _, err := sdk.ControlPlanes.CreateControlPlane(context.Background(), components.CreateControlPlaneRequest{Name: "cp"}); err == nil {
		t.Fatal("want the lost answer")
	}
	if got, want := s.Injected(), (konnectsim.Injected{ServerErrors: 2, LostResponses: 1}); got != want {
		t.Errorf("Injected() = %+v, want %+v", got, want)
	}
	s.ResetCounters()
	if got := s.Injected(); got != (konnectsim.Injected{}) {
		t.Errorf("after ResetCounters: %+v", got)
	}
}

func TestSDKRetryHonoursRetryAfter(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken, sdkkonnectgo.WithRetryConfig(retry.Config{
		Strategy: "backoff",
		Backoff:  &retry.BackoffStrategy{InitialInterval: 10, MaxInterval: 5000, Exponent: 1.5, MaxElapsedTime: 10000},
	}))
	s.Throttle("", 1, time.Second)
	start := time.Now()
	if _, err := sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{}); err != nil {
		t.Fatalf("ListControlPlanes with retries: %v", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, before Retry-After", d)
	}
	if n := s.Count("GET " + konnectsim.PathControlPlanes); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestRateLimitPerOrganization(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{
		Organizations: []konnectsim.Organization{{Tokens: []string{"kpat_a"}}, {Tokens: []string{"kpat_b"}}},
		// One request every 5s after a burst of 5: the test takes far less than 5s.
		RateLimit: 0.2, RateLimitBurst: 5,
	})
	ctx := context.Background()
	count := func(sdk *sdkkonnectgo.SDK, n int) (ok, limited int) {
		for range n {
			_, err := sdk.ControlPlanes.ListControlPlanes(ctx, operations.ListControlPlanesRequest{})
			var sdkErr *sdkerrors.SDKError
			switch {
			case err == nil:
				ok++
			case errors.As(err, &sdkErr) && sdkErr.StatusCode == http.StatusTooManyRequests && retryAfterOK(sdkErr.RawResponse.Header.Get("Retry-After")):
				limited++
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		return ok, limited
	}
	if ok, limited := count(simtest.NewSDK(s, "kpat_a"), 10); ok != 5 || limited != 5 {
		t.Errorf("org A: %d ok, %d limited; want the burst of 5 through", ok, limited)
	}
	if ok, _ := count(simtest.NewSDK(s, "kpat_b"), 5); ok != 5 {
		t.Errorf("org B: %d ok, want 5 (separate bucket)", ok)
	}
	s.SetRateLimit(0, 0)
	if ok, _ := count(simtest.NewSDK(s, "kpat_a"), 5); ok != 5 {
		t.Errorf("after disabling: %d ok", ok)
	}
}

// retryAfterOK accepts a Retry-After of 1 to 5 whole seconds.
func retryAfterOK(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n >= 1 && n <= 5
}

func TestFaultInjection(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name          string
		fault         konnectsim.FaultRule
		wantStatus    int  // 0: a transport error
		wantCommitted bool // the service exists afterwards
	}{
		{"5xx before commit", konnectsim.FaultRule{Method: "POST", Path: konnectsim.PathServices, Times: 1}, http.StatusInternalServerError, false},
		{"503", konnectsim.FaultRule{Path: konnectsim.PathServices, Times: 1, Status: http.StatusServiceUnavailable}, http.StatusServiceUnavailable, false},
		{"lost response", konnectsim.FaultRule{Method: "POST", Path: konnectsim.PathServices, Times: 1, LostResponse: true}, http.StatusBadGateway, true},
		{"dropped connection", konnectsim.FaultRule{Method: "POST", Path: konnectsim.PathServices, Times: 1, DropConnection: true}, 0, false},
		{"lost response, dropped connection", konnectsim.FaultRule{Method: "POST", Path: konnectsim.PathServices, Times: 1, LostResponse: true, DropConnection: true}, 0, true},
		{"other endpoint unaffected", konnectsim.FaultRule{Method: "POST", Path: konnectsim.PathConsumers, Times: 1}, -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := konnectsim.StartTest(t, konnectsim.Options{})
			sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
			cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
			s.AddFault(tc.fault)

			_, err := sdk.Services.CreateService(ctx, cp.ID, components.Service{Name: simtest.Ptr("svc"), Host: "h", Tags: []string{"k8s-uid:1"}})
			switch {
			case tc.wantStatus == -1:
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
			case tc.wantStatus == 0:
				if err == nil || !strings.Contains(err.Error(), "error sending request") {
					t.Fatalf("got %v, want a transport error", err)
				}
			default:
				if got := simtest.SDKStatus(err); got != tc.wantStatus {
					t.Fatalf("got %v (status %d), want %d", err, got, tc.wantStatus)
				}
			}

			// What a client adopting a lost create would do: find it by tag.
			res, err := sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID, Tags: simtest.Ptr("k8s-uid:1")})
			if err != nil {
				t.Fatal(err)
			}
			if committed := len(res.Object.Data) == 1; committed != tc.wantCommitted {
				t.Fatalf("committed = %v, want %v", committed, tc.wantCommitted)
			}
			// The rule fired once: the retry goes through and finds the name taken or creates it.
			_, err = sdk.Services.CreateService(ctx, cp.ID, components.Service{Name: simtest.Ptr("svc"), Host: "h"})
			if tc.wantCommitted && simtest.SDKStatus(err) != http.StatusBadRequest || !tc.wantCommitted && err != nil {
				t.Fatalf("second create: %v", err)
			}
		})
	}
}

func TestLostDeleteIsCommitted(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	svc := simtest.CreateService(t, sdk, cp.ID, "svc")
	s.LoseNext("DELETE", konnectsim.PathService, 1)
	if _, err := sdk.Services.DeleteService(ctx, cp.ID, *svc.ID); simtest.SDKStatus(err) != http.StatusBadGateway {
		t.Fatalf("delete: %v, want 502", err)
	}
	if _, err := sdk.Services.DeleteService(ctx, cp.ID, *svc.ID); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Fatalf("retried delete: %v, want 404", err)
	}
}

// Random faults are reproducible with a seed.
func TestErrorRateIsSeeded(t *testing.T) {
	pattern := func() string {
		s := konnectsim.StartTest(t, konnectsim.Options{Seed: 42, ErrorRate: 0.3})
		sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
		var b strings.Builder
		for range 60 {
			_, err := sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{})
			switch simtest.SDKStatus(err) {
			case 0:
				b.WriteByte('.')
			case http.StatusInternalServerError:
				b.WriteByte('x')
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		return b.String()
	}
	first, second := pattern(), pattern()
	if first != second {
		t.Fatalf("same seed, different faults:\n%s\n%s", first, second)
	}
	if n := strings.Count(first, "x"); n < 6 || n > 35 {
		t.Fatalf("%d failures out of 60 at rate 0.3: %s", n, first)
	}
}

func TestSeededIDs(t *testing.T) {
	ids := func() string {
		s := konnectsim.StartTest(t, konnectsim.Options{Seed: 7})
		return simtest.CreateControlPlane(t, simtest.NewSDK(s, konnectsim.DefaultToken), "cp", nil).ID
	}
	if a, b := ids(), ids(); a != b {
		t.Fatalf("ids differ with one seed: %s %s", a, b)
	}
}

func TestLatency(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{Latency: 150 * time.Millisecond})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	start := time.Now()
	if _, err := sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("answered in %v, want at least 150ms", d)
	}
	s.SetLatency(0)
	start = time.Now()
	if _, err := sdk.ControlPlanes.ListControlPlanes(context.Background(), operations.ListControlPlanesRequest{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 150*time.Millisecond {
		t.Fatalf("answered in %v after latency was removed", d)
	}
}

func TestCounters(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	for i := range 3 {
		simtest.CreateService(t, sdk, cp.ID, fmt.Sprintf("s%d", i))
	}
	_, _ = sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID})
	_, _ = simtest.NewSDK(s, "kpat_wrong").Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID})
	_, _, _ = simtest.RawRequest(t, s, "GET", "/v2/no-such-thing", konnectsim.DefaultToken, "")
	simtest.ExpectRejected(t, s, 1) // no operation of Konnect's OpenAPI document

	want := map[string]int64{
		"POST " + konnectsim.PathControlPlanes: 1,
		"POST " + konnectsim.PathServices:      3,
		"GET " + konnectsim.PathServices:       2, // a rejected request counts too
		"GET unmatched":                        1,
	}
	if got := s.Counters(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counters = %v, want %v", got, want)
	}
	if s.TotalRequests() != 7 || s.Count("POST /v2/control-planes/{controlPlaneId}/core-entities/services") != 3 {
		t.Fatalf("total %d", s.TotalRequests())
	}
	s.ResetCounters()
	if len(s.Counters()) != 0 || s.TotalRequests() != 0 {
		t.Fatalf("after reset: %v", s.Counters())
	}
}

func TestOutOfBandEdit(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", map[string]string{"owner": "alm"})
	svc := simtest.CreateService(t, sdk, cp.ID, "svc", "k8s-uid:1")
	route, err := sdk.Routes.CreateRoute(ctx, cp.ID, components.CreateRouteRouteJSON(components.RouteJSON{Paths: []string{"/"}, Service: &components.RouteJSONService{ID: svc.ID}}))
	if err != nil {
		t.Fatal(err)
	}
	before := s.TotalRequests()

	// Someone changes the port and removes the tags in the UI.
	if err := s.Edit(*svc.ID, map[string]any{"port": 8080, "tags": nil}); err != nil {
		t.Fatal(err)
	}
	got, err := sdk.Services.GetService(ctx, *svc.ID, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if *got.Service.Port != 8080 || got.Service.Tags != nil || *got.Service.UpdatedAt < *svc.UpdatedAt {
		t.Fatalf("edit not visible: %+v", got.Service)
	}
	if err := s.Edit(cp.ID, map[string]any{"labels": map[string]string{"owner": "someone"}}); err != nil {
		t.Fatal(err)
	}
	gotCP, err := sdk.ControlPlanes.GetControlPlane(ctx, cp.ID)
	if err != nil || gotCP.ControlPlane.Labels["owner"] != "someone" {
		t.Fatalf("control plane edit not visible: %v %+v", err, gotCP)
	}
	if s.TotalRequests() != before+2 {
		t.Errorf("out-of-band edits must not count as API requests")
	}

	// Someone deletes the route in the UI.
	if err := s.Remove(*route.Route.RouteJSON.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Routes.GetRoute(ctx, *route.Route.RouteJSON.ID, cp.ID); simtest.SDKStatus(err) != http.StatusNotFound {
		t.Fatalf("route after removal: %v", err)
	}
	if err := s.Edit("nope", map[string]any{"name": "x"}); !errors.Is(err, konnectsim.ErrNotFound) {
		t.Fatalf("edit of unknown id: %v", err)
	}

	objs := s.Objects()
	if len(objs) != 2 || objs[0].Kind != konnectsim.KindControlPlane || objs[1].Kind != konnectsim.KindService || objs[1].ControlPlaneID != cp.ID ||
		objs[1].Name != "svc" || objs[1].OrganizationID != s.OrganizationID(konnectsim.DefaultToken) || objs[1].JSON["port"] != int64(8080) {
		t.Fatalf("objects = %+v", objs)
	}
}

// Many goroutines at once, as the operator and the benchmark do; run with -race.
func TestConcurrentClients(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{LostResponseRate: 0.05, Seed: 3})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)

	const workers, perWorker = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				name := fmt.Sprintf("w%02d-%02d", w, i)
				_, err := sdk.Services.CreateService(ctx, cp.ID, components.Service{Name: simtest.Ptr(name), Host: "h", Tags: []string{"k8s-uid:" + name}})
				if simtest.SDKStatus(err) == http.StatusBadGateway {
					err = nil // lost response: committed anyway
				}
				if err == nil {
					_, err = sdk.Consumers.CreateConsumer(ctx, cp.ID, components.Consumer{Username: simtest.Ptr(name)})
					if simtest.SDKStatus(err) == http.StatusBadGateway {
						err = nil
					}
				}
				if err == nil {
					_, err = sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cp.ID, Size: simtest.Ptr(int64(10))})
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
				}
				if i%5 == 0 {
					_ = s.Objects()
					_ = s.Counters()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	names := map[string]int{}
	for _, o := range s.Objects() {
		names[string(o.Kind)+"/"+o.Name]++
	}
	if len(names) != 1+2*workers*perWorker {
		t.Fatalf("%d distinct objects, want %d", len(names), 1+2*workers*perWorker)
	}
	for n, c := range names {
		if c != 1 {
			t.Errorf("%s stored %d times", n, c)
		}
	}
}

func TestAdminAPI(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	svc := simtest.CreateService(t, sdk, cp.ID, "svc")

	status, _, body := simtest.RawRequest(t, s, "GET", konnectsim.AdminPrefix+"/counters", "", "")
	var counters struct {
		Total     int64            `json:"total"`
		Endpoints map[string]int64 `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(body), &counters); err != nil || status != 200 || counters.Total != 2 || counters.Endpoints["POST "+konnectsim.PathServices] != 1 {
		t.Fatalf("counters: %d %s", status, body)
	}
	if status, _, body = simtest.RawRequest(t, s, "PATCH", konnectsim.AdminPrefix+"/objects/"+*svc.ID, "", `{"host":"elsewhere"}`); status != http.StatusNoContent {
		t.Fatalf("edit: %d %s", status, body)
	}
	status, _, body = simtest.RawRequest(t, s, "GET", konnectsim.AdminPrefix+"/objects", "", "")
	var objs []konnectsim.Object
	if err := json.Unmarshal([]byte(body), &objs); err != nil || status != 200 || len(objs) != 2 || objs[1].JSON["host"] != "elsewhere" {
		t.Fatalf("objects: %d %s", status, body)
	}
	if status, _, body = simtest.RawRequest(t, s, "POST", konnectsim.AdminPrefix+"/faults", "", `{"method":"GET","path":"`+konnectsim.PathControlPlane+`","times":1,"status":503}`); status != http.StatusNoContent {
		t.Fatalf("faults: %d %s", status, body)
	}
	if _, err := sdk.ControlPlanes.GetControlPlane(context.Background(), cp.ID); simtest.SDKStatus(err) != http.StatusServiceUnavailable {
		t.Fatalf("injected 503: %T %v", err, err)
	}
	if status, _, body = simtest.RawRequest(t, s, "POST", konnectsim.AdminPrefix+"/settings", "", `{"latency":"1ms","error_rate":0,"rate_limit":100}`); status != http.StatusNoContent {
		t.Fatalf("settings: %d %s", status, body)
	}
	if status, _, body = simtest.RawRequest(t, s, "POST", konnectsim.AdminPrefix+"/throttle", "", `{"requests":1,"retry_after":"3s"}`); status != http.StatusNoContent {
		t.Fatalf("throttle: %d %s", status, body)
	}
	if status, header, _ := simtest.RawRequest(t, s, "GET", konnectsim.PathControlPlanes, konnectsim.DefaultToken, ""); status != http.StatusTooManyRequests || header.Get("Retry-After") != "3" {
		t.Fatalf("throttled: %d %v", status, header)
	}
	if status, _, _ = simtest.RawRequest(t, s, "DELETE", konnectsim.AdminPrefix+"/objects/"+*svc.ID, "", ""); status != http.StatusNoContent {
		t.Fatalf("remove: %d", status)
	}
	if status, _, _ = simtest.RawRequest(t, s, "DELETE", konnectsim.AdminPrefix+"/objects/"+*svc.ID, "", ""); status != http.StatusNotFound {
		t.Fatalf("remove twice: %d", status)
	}
	if status, _, _ = simtest.RawRequest(t, s, "DELETE", konnectsim.AdminPrefix+"/counters", "", ""); status != http.StatusNoContent || s.TotalRequests() != 0 {
		t.Fatalf("reset: %d", status)
	}
}

func TestStartOnlyOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		if err := konnectsim.New(konnectsim.Options{}).StartOn(addr); err == nil {
			t.Errorf("StartOn(%q) accepted a non-loopback address", addr)
		}
	}
}

// HoldNext: the create is committed while its answer is held; a released answer arrives as it was, a dropped one
// never does, and an unnamed service created twice is two services (Konnect does not deduplicate them).
func TestHoldNext(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	cp := simtest.CreateControlPlane(t, sdk, "cp", nil)
	unnamed := components.Service{Host: "echo.example.com"}
	for _, drop := range []bool{false, true} {
		hold := s.HoldNext("POST", konnectsim.PathServices)
		answered := make(chan error, 1)
		go func() {
			_, err := sdk.Services.CreateService(ctx, cp.ID, unnamed)
			answered <- err
		}()
		select {
		case <-hold.Committed():
		case <-time.After(10 * time.Second):
			t.Fatal("the held create was not committed")
		}
		if hold.Status() != http.StatusCreated {
			t.Errorf("held create: status %d, want 201", hold.Status())
		}
		select {
		case err := <-answered:
			t.Fatalf("the client got an answer while it was held: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if drop {
			hold.Drop()
		} else {
			hold.Release()
		}
		if err := <-answered; (err != nil) != drop {
			t.Errorf("drop=%v: the client got %v", drop, err)
		}
	}
	n := 0
	for _, o := range s.Objects() {
		if o.Kind == konnectsim.KindService {
			n++
		}
	}
	if n != 2 || s.Injected().Held != 2 {
		t.Errorf("%d services, %d held answers; want 2 and 2", n, s.Injected().Held)
	}
}
