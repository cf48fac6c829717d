package speccheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Side says which party broke the contract.
type Side string

const (
	// Request: what the client sent is not what Konnect accepts — a bug of the operator (or of the test that sent it).
	Request Side = "request"
	// Response: what the simulator answered is not what Konnect answers — a bug of the simulator.
	Response Side = "response"
	// Unserved: the client called an operation of the document that the simulator does not serve — a gap in the
	// simulator the client depends on.
	Unserved Side = "unserved"
)

// whose says whose bug a violation on this side is.
var whose = map[Side]string{
	Request:  "request (operator bug: Konnect would reject it)",
	Response: "response (simulator bug: Konnect would not answer this)",
	Unserved: "unserved (simulator gap: the operator calls an operation the simulator does not serve)",
}

// Operation is one operation of the document.
type Operation struct {
	Method string
	// Path is the document's path template, e.g. /v2/control-planes/{controlPlaneId}/core-entities/services.
	Path string
	// ID is the document's operationId, e.g. create-service.
	ID string
}

func (o Operation) String() string {
	if o.Method == "" {
		return "(no operation)"
	}
	return o.Method + " " + o.Path + " (" + o.ID + ")"
}

// Violation is one way an exchange breaks the document.
type Violation struct {
	Side      Side
	Operation Operation
	// Method and URL of the request as sent, Status of the answer (0 when there was none).
	Method, URL string
	Status      int
	// In and Name are the field: In is "path", "query", "header", "body" or "status"; Name the parameter or header,
	// or the JSON pointer into the body ("/data/0/name").
	In, Name string
	// Keyword is the rule: the schema keyword broken ("required", "maxLength", "enum", "nullable"; "" when none),
	// and Reason kin-openapi's words for it.
	Keyword, Reason string
}

// Field is where the violation is: "body /data/0/name", "query size", "header Retry-After", "status".
func (v Violation) Field() string { return strings.TrimSpace(v.In + " " + v.Name) }

// Rule is what the violation breaks: `required: property "title" is missing`.
func (v Violation) Rule() string {
	if v.Keyword == "" {
		return v.Reason
	}
	return v.Keyword + ": " + v.Reason
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s; sent %s %s, answered %d; field %s; rule %s",
		whose[v.Side], v.Operation, v.Method, v.URL, v.Status, v.Field(), v.Rule())
}

// Exchange is one request and the answer it got.
type Exchange struct {
	// Request is the request (its Body is not read: RequestBody is).
	Request     *http.Request
	RequestBody []byte
	// Status, Header and Body are the answer.
	Status int
	Header http.Header
	Body   []byte
	// Served says whether the server has an endpoint for the request; an operation of the document it does not
	// serve is a violation of side Unserved and nothing else is checked.
	Served bool
}

// Check validates ex against the document: the request (path, query, headers, body) and the answer (status,
// headers, body). It returns the operation the request matched (zero when none) and every violation.
func (s *Spec) Check(ctx context.Context, ex Exchange) (Operation, []Violation) {
	c := s.CheckRequest(ctx, ex.Request, ex.RequestBody, ex.Served)
	out := append([]Violation(nil), c.Violations...)
	return c.Operation, append(out, c.CheckResponse(ctx, ex.Status, ex.Header, ex.Body)...)
}

// RequestCheck is a request checked against the document, waiting for its answer (CheckResponse).
type RequestCheck struct {
	// Operation is the operation the request matched, zero when none.
	Operation Operation
	// Violations are the request's (side Request, or Unserved).
	Violations []Violation
	in         *openapi3filter.RequestValidationInput
	base       Violation
}

// CheckRequest checks a request whose body is body (r.Body is not read); served says whether the server has an
// endpoint for it (an operation it does not serve is a violation of side Unserved and nothing else is checked).
func (s *Spec) CheckRequest(ctx context.Context, r *http.Request, body []byte, served bool) *RequestCheck {
	req := r.Clone(ctx)
	req.Body = io.NopCloser(bytes.NewReader(body))
	c := &RequestCheck{base: Violation{Method: req.Method, URL: req.URL.RequestURI()}}
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		c.add(&c.Violations, Request)(where{In: "path"}, "", errNoOperation.Error())
		return c
	}
	c.Operation = Operation{Method: route.Method, Path: route.Path, ID: route.Operation.OperationID}
	c.base.Operation = c.Operation
	if !served {
		c.add(&c.Violations, Unserved)(where{In: "path"}, "", "the simulator has no endpoint for this operation")
		return c
	}
	c.in = &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			MultiError: true, SkipSettingDefaults: true}}
	describe(openapi3filter.ValidateRequest(ctx, c.in), where{}, c.add(&c.Violations, Request))
	return c
}

// CheckResponse checks the answer to the request (status 0: none, the connection was dropped), records the
// exchange in Stats and returns the answer's violations (side Response).
func (c *RequestCheck) CheckResponse(ctx context.Context, status int, header http.Header, body []byte) []Violation {
	if c.in == nil { // no operation, or not served: nothing to check the answer against
		if c.Operation.Method != "" {
			record(c.Operation, false)
		}
		return nil
	}
	var out []Violation
	if status != 0 {
		describe(openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
			RequestValidationInput: c.in, Status: status, Header: header,
			Body:    io.NopCloser(bytes.NewReader(body)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}), where{}, c.add(&out, Response))
	}
	for i := range out {
		out[i].Status = status
	}
	record(c.Operation, len(c.Violations) == 0 && len(out) == 0 && status >= 200 && status < 300)
	return out
}

// add returns what appends a violation of side to list.
func (c *RequestCheck) add(list *[]Violation, side Side) adder {
	return func(at where, keyword, reason string) {
		v := c.base
		v.Side, v.In, v.Name, v.Keyword, v.Reason = side, at.In, at.Name, keyword, reason
		*list = append(*list, v)
	}
}

// where says where in an exchange a violation is: In is "path", "query", "header", "body" or "status"; Name the
// parameter or header, or the body's JSON pointer ("/data/0/name").
type where struct{ In, Name string }

// adder records one violation: where, the schema keyword broken ("required", "maxLength", "" when none) and why.
type adder func(at where, keyword, reason string)

// describe turns a kin-openapi error into violations: one per schema error, each with its field and rule. It
// walks the error tree layer by layer (a RequestError wraps a MultiError of SchemaErrors), so it switches on each
// layer's own type rather than errors.As, which would skip the layers that say where.
func describe(err error, at where, add adder) {
	switch e := err.(type) { //nolint:errorlint // see above
	case nil:
	case openapi3.MultiError:
		for _, one := range e {
			describe(one, at, add)
		}
	case *openapi3filter.RequestError:
		if e.Parameter != nil {
			at = where{In: e.Parameter.In, Name: e.Parameter.Name}
		} else {
			at = where{In: "body"}
		}
		describeCause(e.Err, e.Reason, at, add)
	case *openapi3filter.ResponseError:
		describeResponse(e, add)
	case *openapi3.SchemaError:
		if e.SchemaField == "allOf" && e.Origin != nil { // say which of the schemas, and where
			describe(e.Origin, at, add)
			return
		}
		if at.In == "" {
			at.In = "body"
		}
		if at.In == "body" {
			at.Name = "/" + strings.Join(e.JSONPointer(), "/")
		}
		add(at, e.SchemaField, e.Reason)
	case *routers.RouteError:
		add(where{In: "path"}, "", e.Reason)
	default:
		if inner := errors.Unwrap(err); inner != nil {
			describe(inner, at, add)
			return
		}
		add(at, "", err.Error())
	}
}

// describeCause describes the error under a request or response error, or its reason when it has none.
func describeCause(cause error, reason string, at where, add adder) {
	if cause == nil {
		add(at, "", reason)
		return
	}
	describe(cause, at, add)
}

func describeResponse(err *openapi3filter.ResponseError, add adder) {
	for _, prefix := range []string{"response header ", "unable to decode header "} {
		if rest, ok := strings.CutPrefix(err.Reason, prefix); ok {
			name, _, _ := strings.Cut(strings.TrimPrefix(rest, `"`), `"`)
			describeCause(err.Err, err.Reason, where{In: "header", Name: name}, add)
			return
		}
	}
	if err.Reason == "status is not supported" {
		add(where{In: "status"}, "", "the operation declares no answer with this status")
		return
	}
	describeCause(err.Err, err.Reason, where{In: "body"}, add)
}
