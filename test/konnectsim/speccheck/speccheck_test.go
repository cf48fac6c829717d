package speccheck

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const cpPath = "/v2/control-planes/00000000-0000-4000-8000-000000000000"

// exchange builds an exchange as the simulator sees it: a request to host 127.0.0.1:40123 and its answer.
func exchange(method, path, reqBody string, status int, contentType, body string, header ...string) Exchange {
	r := httptest.NewRequest(method, "http://127.0.0.1:40123"+path, nil)
	if reqBody != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	h := http.Header{"Content-Type": {contentType}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Exchange{Request: r, RequestBody: []byte(reqBody), Status: status, Header: h, Body: []byte(body), Served: true}
}

// Exchanges Konnect really makes, each of which one adjustment of the document is needed for.
var (
	// A Service with `path: null`: the document says 3.1 but marks optional fields `nullable: true` (3.0).
	serviceWithNullPath = exchange("GET", cpPath+"/core-entities/services/svc", "", 200, "application/json",
		`{"id":"00000000-0000-4000-8000-000000000001","host":"example.com","path":null,"port":80,"protocol":"http"}`)
	// The last page of a core entity list: `next: null`.
	lastPage = exchange("GET", cpPath+"/core-entities/services?size=100", "", 200, "application/json", `{"data":[],"next":null}`)
	// A 429 on a core entity create, with Retry-After and the budget's headers: no core entity operation declares 429.
	throttled = exchange("POST", cpPath+"/core-entities/services", `{"host":"example.com"}`, 429, "application/json",
		`{"message":"API rate limit exceeded"}`, "Retry-After", "2", "RateLimit-Remaining", "0", "X-RateLimit-Limit-Minute", "600")
	// Konnect's answer to a unique-constraint violation on a core entity: 400 with code and message.
	uniqueViolation = exchange("POST", cpPath+"/core-entities/services", `{"name":"a","host":"example.com"}`, 400, "application/json",
		`{"code":3,"message":"data constraint error","details":[{"type":"ERROR_TYPE_REFERENCE","field":"name","messages":["name (type: unique) constraint failed"]}]}`)
)

// TestAdjustmentsAreNeeded: each exchange above keeps to the adjusted document, and breaks it when the adjustment
// made for it is left out; the document validates only when its examples are left out.
func TestAdjustmentsAreNeeded(t *testing.T) {
	spec, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s loaded and adjusted in %v", SDKModule, spec.Version, spec.LoadTime)
	for _, tc := range []struct {
		adjustment string
		ex         Exchange
		want       string // in the violation without the adjustment
	}{
		{"treatAsOpenAPI30", serviceWithNullPath, "body /path"},
		{"nextMayBeNull", lastPage, "body /next"},
		{"serveAnywhere", serviceWithNullPath, "no operation of the document"},
		{"addErrorResponses", throttled, "status"},
		{"addErrorResponses", uniqueViolation, "status"},
	} {
		t.Run(tc.adjustment, func(t *testing.T) {
			if _, v := spec.Check(context.Background(), tc.ex); len(v) != 0 {
				t.Fatalf("with every adjustment: %v", v)
			}
			without, err := load(tc.adjustment)
			if err != nil {
				t.Fatal(err)
			}
			_, v := without.Check(context.Background(), tc.ex)
			if len(v) == 0 || !strings.Contains(v[0].Field()+" "+v[0].Rule(), tc.want) {
				t.Fatalf("without %s: %v, want a violation about %q", tc.adjustment, v, tc.want)
			}
			t.Logf("without %s: %s", tc.adjustment, v[0])
		})
	}
	t.Run("documentValidation", func(t *testing.T) {
		doc, err := loadFile(spec.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(context.Background()); err == nil || !strings.Contains(err.Error(), "invalid example") {
			t.Fatalf("the document as Kong wrote it: %v, want an invalid example", err)
		} else {
			t.Logf("the document as Kong wrote it: %.200s", err)
		}
		if err := doc.Validate(context.Background(), documentValidation...); err != nil {
			t.Fatalf("without its examples: %v", err)
		}
	})
}

// TestViolations: a violation says which side broke the document, the operation, the field and the rule.
func TestViolations(t *testing.T) {
	spec, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ex   Exchange
		want []string // in order: side, operation, field, rule
	}{
		{"a control plane name too short", exchange("POST", "/v2/control-planes", `{"name":"x"}`, 400, "application/problem+json",
			`{"status":400,"title":"Bad Request","instance":"kong:trace:1","detail":"Invalid Parameters","invalid_parameters":[{"field":"name","reason":"too short"}]}`),
			[]string{"request (operator bug", "POST /v2/control-planes (create-control-plane)", "field body /name", "rule minLength"}},
		{"a 400 problem without invalid_parameters", exchange("POST", "/v2/control-planes", `{"name":"prod"}`, 400, "application/problem+json",
			`{"status":400,"title":"Bad Request","instance":"kong:trace:1","detail":"Invalid"}`),
			[]string{"response (simulator bug", "(create-control-plane)", "field body /invalid_parameters", "rule required"}},
		{"a 429 without Retry-After", exchange("GET", cpPath+"/core-entities/services", "", 429, "application/json", `{"message":"API rate limit exceeded"}`),
			[]string{"response (simulator bug", "(list-service)", "field header Retry-After", "missing"}},
		{"a platform 429 in the core entities' dialect", exchange("GET", "/v2/control-planes", "", 429, "application/json", `{"message":"API rate limit exceeded"}`, "Retry-After", "1"),
			[]string{"response (simulator bug", "(list-control-planes)", "field header Content-Type", "application/json"}},
		{"a page size over the maximum", exchange("GET", cpPath+"/core-entities/services?size=1001", "", 400, "application/json", `{"code":3,"message":"validation error"}`),
			[]string{"request (operator bug", "(list-service)", "field query size", "rule maximum"}},
		{"an operation the simulator does not serve", func() Exchange {
			ex := exchange("GET", cpPath+"/core-entities/partials", "", 404, "application/json", `{"message":"no Route matched with those values"}`)
			ex.Served = false
			return ex
		}(), []string{"unserved (simulator gap", "(list-partial)", "field path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, v := spec.Check(context.Background(), tc.ex)
			if len(v) != 1 {
				t.Fatalf("%d violations, want 1: %v", len(v), v)
			}
			s, at := v[0].String(), 0
			for _, want := range tc.want {
				i := strings.Index(s[at:], want)
				if i < 0 {
					t.Fatalf("violation %q does not say %q (after position %d)", s, want, at)
				}
				at += i + len(want)
			}
		})
	}
}
