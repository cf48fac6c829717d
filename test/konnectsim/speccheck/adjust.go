package speccheck

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The adjustments: where Kong's document, used as it is, would reject what Konnect really does, or cannot be used
// at all. Each is one function; adjust_test.go shows each one is needed (without it, a known-good exchange fails or
// the document does not validate).

// adjustments are every adjustment, by name, in the order they apply.
var adjustments = []struct {
	name  string
	apply func(*openapi3.T) error
}{
	{"treatAsOpenAPI30", noError(treatAsOpenAPI30)},
	{"nextMayBeNull", noError(nextMayBeNull)},
	{"serveAnywhere", noError(serveAnywhere)},
	{"addErrorResponses", addErrorResponses},
	{"addRateLimitHeaders", noError(addRateLimitHeaders)},
}

func noError(f func(*openapi3.T)) func(*openapi3.T) error {
	return func(doc *openapi3.T) error { f(doc); return nil }
}

// adjust applies every adjustment but those named in skip (for tests that show each is needed).
func adjust(doc *openapi3.T, skip ...string) error {
	for _, a := range adjustments {
		if slices.Contains(skip, a.name) {
			continue
		}
		if err := a.apply(doc); err != nil {
			return err
		}
	}
	return nil
}

// documentValidation is how the document is validated as a document (speccheck_test.go; not at run time, where it
// would cost 0.4 s for nothing exchanges depend on): without its examples. Several are rejected by their own
// schemas, and kin-openapi reports them one at a time: CatalogIntegrationConfigSchema's `base_url` and
// CriteriaEvaluationResultDetails' `raw_value` each match two branches of a oneOf, ListApplicationsResponse's
// `granted_scopes` is null where the field is not nullable, and more behind them. Examples play no part in checking
// exchanges.
var documentValidation = []openapi3.ValidationOption{openapi3.DisableExamplesValidation()}

// treatAsOpenAPI30 checks data with OpenAPI 3.0 semantics. The document says `openapi: 3.1.0` but marks 519
// optional fields the 3.0 way, `nullable: true`, which 3.1 (JSON Schema 2020-12) ignores as an unknown keyword: real
// answers such as a Service with `path: null` or a Route with `hosts: null` would fail. Under 3.0 semantics
// kin-openapi honours `nullable`. What 3.1 adds that 3.0 does not check is `const` (71 uses in the document);
// adjust_test.go asserts that none is reachable from the operations the simulator serves.
//
// Run after the document is loaded: the loader has already applied 3.1 rules to the text ($ref siblings,
// exclusiveMinimum as a number).
func treatAsOpenAPI30(doc *openapi3.T) {
	doc.OpenAPI = "3.0.3"
}

// nextMayBeNull lets a core entity list answer `"next": null` on its last page, as Kong's Admin API does and as
// PaginationNextResponse's own description says ("URI to the next page (may be null)"); its schema forgot
// `nullable: true`. The SDK decodes it as a nil *string.
func nextMayBeNull(doc *openapi3.T) {
	if s := doc.Components.Schemas["PaginationNextResponse"]; s != nil && s.Value != nil {
		s.Value.Nullable = true
	}
}

// serveAnywhere matches requests by path only. The document's servers are Kong's hosts
// (https://{global,us,eu,au}.api.konghq.com); the simulator listens on loopback with a port of its own, and the
// operator's server URL may be any of them.
func serveAnywhere(doc *openapi3.T) {
	doc.Servers = openapi3.Servers{{URL: "/"}}
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
}

// Error dialects. The platform APIs (control planes, organizations) answer application/problem+json with the
// document's own error schemas. The core entities (services, routes, consumers, ...) are served by a Kong Admin API
// compatible backend that answers application/json {code, message, details} where code is a gRPC status code, and
// Konnect's gateway answers 401, 403 and 429 there with {message[, status]}. A few older platform operations (data
// plane client certificates) declare the "KonnectCPLegacy" errors: application/json {message}.
const (
	contentProblem = "application/problem+json"
	contentJSON    = "application/json"
)

type dialect int

const (
	dialectPlatform dialect = iota
	dialectCore
	dialectLegacy
)

// dialectOf says which error dialect an operation speaks: core entities by path, legacy operations by the
// application/json 401 they declare, every other one the platform's.
func dialectOf(path string, op *openapi3.Operation) dialect {
	if strings.Contains(path, "/core-entities/") {
		return dialectCore
	}
	if r := op.Responses.Value("401"); r != nil && r.Value != nil && r.Value.Content.Get(contentJSON) != nil {
		return dialectLegacy
	}
	return dialectPlatform
}

// addErrorResponses declares the error statuses an operation may answer and the document omits. Most core entity
// operations declare only their success and 401 (none under /v2/control-planes declares 429), and Konnect answers
// a core entity unique-constraint violation with a 400 carrying {code: 3, message: "data constraint error"} that
// no schema in the document describes. Without this every error answer would be "status is not supported". Shapes:
// the document's error schemas for the platform APIs (BadRequestError ... ConflictError, RateLimited,
// InternalServerError, ServiceUnavailable; sdkerrors in the SDK is generated from them), and for the core entities
// Kong's Admin API error (GatewayUnauthorizedError for 401, as the document has it). An operation's own declaration
// always wins.
func addErrorResponses(doc *openapi3.T) error {
	platform, err := platformErrors(doc)
	if err != nil {
		return err
	}
	core, legacy, err := coreErrors(doc)
	if err != nil {
		return err
	}
	byDialect := map[dialect]map[string]*openapi3.ResponseRef{dialectPlatform: platform, dialectCore: core, dialectLegacy: legacy}
	for path, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses == nil {
				op.Responses = openapi3.NewResponses()
			}
			add := byDialect[dialectOf(path, op)]
			for _, code := range errorStatuses {
				if !declares(op.Responses, code) {
					op.Responses.Set(code, add[code])
				}
			}
		}
	}
	return nil
}

// errorStatuses are the error statuses every operation may answer: those the operator handles (400, 401, 403,
// 404, 409, 429, 5xx).
var errorStatuses = []string{"400", "401", "403", "404", "409", "429", "500", "503", "5XX"}

// declares says whether responses has code or, for one 5xx status, the range 5XX.
func declares(responses *openapi3.Responses, code string) bool {
	return responses.Value(code) != nil || code != "5XX" && code[0] == '5' && responses.Value("5XX") != nil
}

// platformErrors are the platform APIs' error answers, from the document's own schemas and responses.
func platformErrors(doc *openapi3.T) (map[string]*openapi3.ResponseRef, error) {
	out := map[string]*openapi3.ResponseRef{}
	for code, schema := range map[string]string{"400": "BadRequestError", "401": "UnauthorizedError",
		"403": "ForbiddenError", "404": "NotFoundError", "409": "ConflictError"} {
		s := doc.Components.Schemas[schema]
		if s == nil {
			return nil, fmt.Errorf("speccheck: the document has no schema %s", schema)
		}
		out[code] = response(code, contentProblem, s)
	}
	for code, name := range map[string]string{"429": "RateLimited", "500": "InternalServerError", "503": "ServiceUnavailable"} {
		r := doc.Components.Responses[name]
		if r == nil || r.Value == nil {
			return nil, fmt.Errorf("speccheck: the document has no response %s", name)
		}
		out[code] = &openapi3.ResponseRef{Value: r.Value}
	}
	// Any other 5xx (502 and 504 come from Konnect's edge): a problem with the fields every Konnect problem has.
	out["5XX"] = response("5XX", contentProblem, doc.Components.Schemas["BaseError"])
	return out, nil
}

// coreErrors are the core entities' error answers, and the legacy platform operations'.
func coreErrors(doc *openapi3.T) (core, legacy map[string]*openapi3.ResponseRef, err error) {
	unauthorized := doc.Components.Schemas["GatewayUnauthorizedError"]
	if unauthorized == nil {
		return nil, nil, fmt.Errorf("speccheck: the document has no schema GatewayUnauthorizedError")
	}
	kongError := func(required ...string) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema().
			WithProperty("code", openapi3.NewIntegerSchema()).
			WithProperty("message", openapi3.NewStringSchema()).
			WithProperty("status", openapi3.NewIntegerSchema()).
			WithProperty("details", openapi3.NewArraySchema().WithItems(openapi3.NewObjectSchema()))
		s.Required = required
		return s.NewRef()
	}
	// 400 (validation, data constraint) and 409 carry the gRPC code and a message; the others at least a message.
	withCode, message := kongError("code", "message"), kongError("message")
	core = map[string]*openapi3.ResponseRef{
		"400": response("400", contentJSON, withCode),
		"401": response("401", contentJSON, unauthorized),
		"409": response("409", contentJSON, withCode),
	}
	legacy = map[string]*openapi3.ResponseRef{}
	for _, code := range errorStatuses {
		legacy[code] = response(code, contentJSON, message)
		if core[code] == nil {
			core[code] = legacy[code]
		}
	}
	return core, legacy, nil
}

func response(code, contentType string, schema *openapi3.SchemaRef) *openapi3.ResponseRef {
	desc := "error " + code + " (added by speccheck)"
	if n, err := strconv.Atoi(code); err == nil {
		desc = http.StatusText(n) + " (added by speccheck)"
	}
	return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(desc).
		WithContent(openapi3.Content{contentType: openapi3.NewMediaType().WithSchemaRef(schema)})}
}

// Konnect's rate-limit headers, as its API gateway (Kong's rate limiting plugin) sends them: on every answer while
// a budget applies, and Retry-After on a 429. The document declares none of them.
var rateLimitHeaders = []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute"}

// addRateLimitHeaders declares the rate-limit headers on every answer (each a whole number of requests or seconds)
// and makes Retry-After required on every 429, so their presence and form are checked.
func addRateLimitHeaders(doc *openapi3.T) {
	count := func(required bool) *openapi3.HeaderRef {
		h := &openapi3.Header{Parameter: openapi3.Parameter{Required: required,
			Schema: openapi3.NewIntegerSchema().WithMin(0).NewRef()}}
		return &openapi3.HeaderRef{Value: h}
	}
	seen := map[*openapi3.Response]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code, r := range op.Responses.Map() {
				if r.Value == nil || seen[r.Value] {
					continue
				}
				seen[r.Value] = true
				if r.Value.Headers == nil {
					r.Value.Headers = openapi3.Headers{}
				}
				for _, name := range rateLimitHeaders {
					if r.Value.Headers[name] == nil {
						r.Value.Headers[name] = count(false)
					}
				}
				if code == "429" {
					r.Value.Headers["Retry-After"] = count(true)
				}
			}
		}
	}
}
