// Package coreentities serves the Konnect API's core entities: services,
// routes, consumers and the consumers' credentials (consumercredentials.go).
//
// Core entities (services, routes, consumers) live in a control plane and
// behave like Kong's Admin API as served by Konnect: POST creates (201), PUT
// /{id} creates or replaces (200; fields left out get their defaults again),
// GET /{id} also finds an entity by name (username for consumers), DELETE
// answers 204, and lists page with size (default 100, at most 1000) and an
// opaque offset cursor returned with the page, filter with
// tags=a,b (all) or tags=a/b (any) and filter[name][eq|contains].
package coreentities

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// object is a stored entity as decoded JSON (see store.Record).
type object = map[string]any

// API serves the core entities of the control planes in a store.
type API struct {
	st *store.Store
	// conflictStatus is the HTTP status of a unique-constraint violation (400 or 409).
	conflictStatus int
}

// New returns the core entity API over st; conflictStatus is the HTTP status
// of a unique-constraint violation: 400 as Konnect answers, or 409.
func New(st *store.Store, conflictStatus int) *API {
	return &API{st: st, conflictStatus: conflictStatus}
}

// Collection returns the handlers of the collection of kind whose entity ID
// (or name) is the path variable idVar; parentIDVar, when set, is the path
// variable of the entity they are nested under (a route's service, a
// credential's consumer).
func (a *API) Collection(kind store.Kind, idVar, parentIDVar string) *Collection {
	return &Collection{a: a, spec: coreSpecs[kind], idVar: idVar, parentIDVar: parentIDVar}
}

// UniqueFields are the fields of kind unique within a control plane.
func UniqueFields(kind store.Kind) []string { return coreSpecs[kind].unique }

func routeServiceID(obj object) string { return store.ParentOf(obj, "service") }

type fieldKind int

const (
	fString fieldKind = iota
	fInt
	fBool
	fStrings
	fObject
	fObjects
)

type fieldSpec struct {
	kind     fieldKind
	min, max int64    // for fInt, when max > 0
	enum     []string // for fString and each element of fStrings
	enumInts []int64  // for fInt
}

type kindSpec struct {
	kind   store.Kind
	label  string // singular, for messages
	fields map[string]fieldSpec
	// defaults returns the values Konnect fills in for fields left out.
	defaults func() object
	// unique lists the fields that are unique within a control plane.
	unique []string
	// prepare rewrites a request body before validation (e.g. a service's url).
	prepare func(body object) []errorDetail
	// check validates the whole entity once defaults are applied.
	check func(obj object) []errorDetail
	// parent is the field naming the entity an entity belongs to ("service" for routes, "consumer" for
	// credentials), and parentSpec its kind.
	parent     string
	parentSpec *kindSpec
	// uniquePerParent lists the fields unique among the entities of one parent (an ACL group per consumer).
	uniquePerParent []string
	// refs are the fields ({"id": ...}) naming another entity of the control plane, which must exist.
	refs map[string]store.Kind
	// uniqueKey, when set, is a value that must be unique among the entities of the kind (a plugin's name and
	// scope), with the label naming it in the error.
	uniqueKey func(obj object) (key, label string)
	// hostName: the name is a host name (an SNI's, with wildcards), checked by check instead of namePattern.
	hostName bool
}

// coreSpecs maps each core entity kind to its spec.
var coreSpecs = map[store.Kind]*kindSpec{}

var (
	// Names of services and routes: letters, digits and . - _ ~ (no spaces or slashes).
	namePattern = regexp.MustCompile(`^[\p{L}\p{N}.\-_~]+$`)

	serviceProtocols = []string{"grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss"}
	routeProtocols   = []string{"grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss"}
	timeoutField     = fieldSpec{kind: fInt, min: 1, max: 2147483646}
	tagsField        = fieldSpec{kind: fStrings}
)

var serviceSpec = &kindSpec{
	kind:  store.KindService,
	label: "service",
	fields: map[string]fieldSpec{
		"id":                 {kind: fString},
		"name":               {kind: fString},
		"host":               {kind: fString},
		"port":               {kind: fInt, min: 0, max: 65535},
		"protocol":           {kind: fString, enum: serviceProtocols},
		"path":               {kind: fString},
		"retries":            {kind: fInt, min: 0, max: 32767},
		"connect_timeout":    timeoutField,
		"read_timeout":       timeoutField,
		"write_timeout":      timeoutField,
		"enabled":            {kind: fBool},
		"tags":               tagsField,
		"tls_verify":         {kind: fBool},
		"tls_verify_depth":   {kind: fInt, min: 0, max: 64},
		"ca_certificates":    {kind: fStrings},
		"client_certificate": {kind: fObject},
		"tls_sans":           {kind: fObject},
	},
	defaults: func() object {
		return object{
			"protocol":        "http",
			"port":            int64(80),
			"retries":         int64(5),
			"connect_timeout": int64(60000),
			"read_timeout":    int64(60000),
			"write_timeout":   int64(60000),
			"enabled":         true,
		}
	},
	unique: []string{"name"},
	// A service's client certificate is a foreign key (Kong's services schema): it must exist in the control plane.
	refs: map[string]store.Kind{"client_certificate": store.KindCertificate},
	// url is a write-only helper that sets protocol, host, port and path.
	prepare: func(body object) []errorDetail {
		raw, ok := body["url"]
		if !ok {
			return nil
		}
		delete(body, "url")
		if raw == nil {
			return nil
		}
		u, err := url.Parse(store.Str(raw))
		if err != nil || u.Scheme == "" || u.Hostname() == "" {
			return []errorDetail{fieldError("url", "invalid url")}
		}
		body["protocol"] = u.Scheme
		body["host"] = u.Hostname()
		switch {
		case u.Port() != "":
			p, _ := strconv.ParseInt(u.Port(), 10, 64)
			body["port"] = p
		case u.Scheme == "https" || u.Scheme == "grpcs" || u.Scheme == "wss" || u.Scheme == "tls":
			body["port"] = int64(443)
		default:
			body["port"] = int64(80)
		}
		if u.Path != "" {
			body["path"] = u.Path
		}
		return nil
	},
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		if store.Str(obj["host"]) == "" {
			bad = append(bad, entityError("missing properties: 'host'"))
		}
		if p, ok := obj["path"]; ok && !strings.HasPrefix(store.Str(p), "/") {
			bad = append(bad, fieldError("path", "should start with: /"))
		}
		return bad
	},
}

var routeSpec = &kindSpec{
	kind:  store.KindRoute,
	label: "route",
	fields: map[string]fieldSpec{
		"id":                         {kind: fString},
		"name":                       {kind: fString},
		"protocols":                  {kind: fStrings, enum: routeProtocols},
		"methods":                    {kind: fStrings},
		"hosts":                      {kind: fStrings},
		"paths":                      {kind: fStrings},
		"headers":                    {kind: fObject},
		"https_redirect_status_code": {kind: fInt, enumInts: []int64{426, 301, 302, 307, 308}},
		"regex_priority":             {kind: fInt},
		"strip_path":                 {kind: fBool},
		"path_handling":              {kind: fString, enum: []string{"v0", "v1"}},
		"preserve_host":              {kind: fBool},
		"request_buffering":          {kind: fBool},
		"response_buffering":         {kind: fBool},
		"snis":                       {kind: fStrings},
		"sources":                    {kind: fObjects},
		"destinations":               {kind: fObjects},
		"tags":                       tagsField,
		"service":                    {kind: fObject},
	},
	defaults: func() object {
		return object{
			"protocols":                  []any{"http", "https"},
			"https_redirect_status_code": int64(426),
			"regex_priority":             int64(0),
			"strip_path":                 true,
			"path_handling":              "v0",
			"preserve_host":              false,
			"request_buffering":          true,
			"response_buffering":         true,
		}
	},
	unique: []string{"name"},
	parent: "service",
	refs:   map[string]store.Kind{"service": store.KindService},
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		for i, p := range stringList(obj["paths"]) {
			if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") {
				bad = append(bad, fieldError(fmt.Sprintf("paths[%d]", i), "should start with: / (fixed path) or ~/ (regex path)"))
			}
		}
		has := func(f string) bool {
			switch v := obj[f].(type) {
			case []any:
				return len(v) > 0
			case map[string]any:
				return len(v) > 0
			}
			return false
		}
		for _, p := range stringList(obj["protocols"]) {
			if (p == "http" || p == "https") && !has("methods") && !has("hosts") && !has("headers") && !has("paths") && !(p == "https" && has("snis")) {
				bad = append(bad, entityError("must set one of 'methods', 'hosts', 'headers', 'paths' when 'protocols' is '%s'", p))
				break
			}
		}
		if svc, ok := obj["service"]; ok {
			if m, isObj := svc.(map[string]any); !isObj || store.Str(m["id"]) == "" {
				bad = append(bad, fieldError("service.id", "missing properties: 'id'"))
			}
		}
		return bad
	},
}

// Credentials (consumercredentials.go) nest under consumers.
func init() {
	for _, k := range []*kindSpec{basicAuthSpec, keyAuthSpec, aclSpec, jwtSpec, hmacAuthSpec} {
		k.parentSpec = consumerSpec
	}
	routeSpec.parentSpec = serviceSpec
	targetSpec.parentSpec = upstreamSpec
	sniSpec.parentSpec = certificateSpec
	keySpec.parentSpec = keySetSpec
	for _, k := range []*kindSpec{serviceSpec, routeSpec, consumerSpec, basicAuthSpec, keyAuthSpec, aclSpec, jwtSpec, hmacAuthSpec, consumerGroupSpec, pluginSpec,
		upstreamSpec, targetSpec, vaultSpec, certificateSpec, caCertificateSpec, sniSpec, keySpec, keySetSpec} {
		coreSpecs[k.kind] = k
	}
}

var consumerSpec = &kindSpec{
	kind:  store.KindConsumer,
	label: "consumer",
	fields: map[string]fieldSpec{
		"id":        {kind: fString},
		"username":  {kind: fString},
		"custom_id": {kind: fString},
		"tags":      tagsField,
	},
	defaults: func() object { return object{} },
	unique:   []string{"username", "custom_id"},
	check: func(obj object) []errorDetail {
		if store.Str(obj["username"]) == "" && store.Str(obj["custom_id"]) == "" {
			return []errorDetail{entityError("at least one of these fields must be non-empty: 'custom_id', 'username'")}
		}
		return nil
	},
}

// validate checks a request body against the kind's fields (unknown fields
// are refused, as Konnect does) and returns the entity with defaults applied.
func (k *kindSpec) validate(body object) (object, []errorDetail) {
	delete(body, "created_at")
	delete(body, "updated_at")
	var bad []errorDetail
	if k.prepare != nil {
		bad = append(bad, k.prepare(body)...)
	}
	obj := k.defaults()
	for _, key := range slices.Sorted(maps.Keys(body)) {
		v := body[key]
		spec, known := k.fields[key]
		switch {
		case !known:
			bad = append(bad, fieldError(key, "unknown field"))
			continue
		case v == nil:
			delete(obj, key)
			continue
		}
		if d := checkField(key, spec, v); d != nil {
			bad = append(bad, *d)
			continue
		}
		obj[key] = v
	}
	if id, ok := obj["id"]; ok && !isUUID(store.Str(id)) {
		bad = append(bad, fieldError("id", "must be a valid UUID"))
	}
	if name, ok := obj["name"]; ok && !k.hostName && !namePattern.MatchString(store.Str(name)) {
		bad = append(bad, fieldError("name", "must only contain letters, digits, '.', '-', '_' and '~'"))
	}
	if len(bad) == 0 && k.check != nil {
		bad = k.check(obj)
	}
	return obj, bad
}

func checkField(key string, spec fieldSpec, v any) *errorDetail {
	fail := func(format string, args ...any) *errorDetail {
		d := fieldError(key, format, args...)
		return &d
	}
	switch spec.kind {
	case fString:
		s, ok := v.(string)
		if !ok {
			return fail("expected string, but got %s", jsonType(v))
		}
		if spec.enum != nil && !slices.Contains(spec.enum, s) {
			return fail("value must be one of %s", quoteAll(spec.enum))
		}
	case fInt:
		n, ok := v.(int64)
		if !ok {
			return fail("expected integer, but got %s", jsonType(v))
		}
		if spec.max > 0 && (n < spec.min || n > spec.max) {
			return fail("value must be between %d and %d", spec.min, spec.max)
		}
		if spec.enumInts != nil && !slices.Contains(spec.enumInts, n) {
			return fail("value must be one of %v", spec.enumInts)
		}
	case fBool:
		if _, ok := v.(bool); !ok {
			return fail("expected boolean, but got %s", jsonType(v))
		}
	case fStrings:
		list, ok := v.([]any)
		if !ok {
			return fail("expected array, but got %s", jsonType(v))
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				d := fieldError(fmt.Sprintf("%s[%d]", key, i), "expected string, but got %s", jsonType(e))
				return &d
			}
			if spec.enum != nil && !slices.Contains(spec.enum, s) {
				d := fieldError(fmt.Sprintf("%s[%d]", key, i), "value must be one of %s", quoteAll(spec.enum))
				return &d
			}
			if key == "tags" {
				if len(s) > 128 {
					d := fieldError(fmt.Sprintf("tags[%d]", i), "length must be <= 128, but got %d", len(s))
					return &d
				}
				if s == "" || strings.ContainsAny(s, ",/") {
					d := fieldError(fmt.Sprintf("tags[%d]", i), "must be a non-empty string without ',' or '/'")
					return &d
				}
			}
		}
	case fObject:
		if _, ok := v.(map[string]any); !ok {
			return fail("expected object, but got %s", jsonType(v))
		}
	case fObjects:
		list, ok := v.([]any)
		if !ok {
			return fail("expected array, but got %s", jsonType(v))
		}
		for i, e := range list {
			if _, ok := e.(map[string]any); !ok {
				d := fieldError(fmt.Sprintf("%s[%d]", key, i), "expected object, but got %s", jsonType(e))
				return &d
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64, float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, store.Str(e))
	}
	return out
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidPattern.MatchString(s) }
