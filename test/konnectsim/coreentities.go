package konnectsim

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Core entities (services, routes, consumers) live in a control plane and
// behave like Kong's Admin API as served by Konnect: POST creates (201), PUT
// /{id} creates or replaces (200; fields left out get their defaults again),
// GET /{id} also finds an entity by name (username for consumers), DELETE
// answers 204, and lists page with size (default 100, at most 1000) and an
// opaque offset cursor returned with the page, filter with
// tags=a,b (all) or tags=a/b (any) and filter[name][eq|contains].

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
	kind   Kind
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
	// noUpdatedAt: Kong's credentials carry created_at only.
	noUpdatedAt bool
}

// coreSpecs maps each core entity kind to its spec.
var coreSpecs = map[Kind]*kindSpec{}

var (
	// Names of services and routes: letters, digits and . - _ ~ (no spaces or slashes).
	namePattern = regexp.MustCompile(`^[\p{L}\p{N}.\-_~]+$`)

	serviceProtocols = []string{"grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss"}
	routeProtocols   = []string{"grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss"}
	timeoutField     = fieldSpec{kind: fInt, min: 1, max: 2147483646}
	tagsField        = fieldSpec{kind: fStrings}
)

var serviceSpec = &kindSpec{
	kind:  KindService,
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
		u, err := url.Parse(str(raw))
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
		if str(obj["host"]) == "" {
			bad = append(bad, entityError("missing properties: 'host'"))
		}
		if p, ok := obj["path"]; ok && !strings.HasPrefix(str(p), "/") {
			bad = append(bad, fieldError("path", "should start with: /"))
		}
		return bad
	},
}

var routeSpec = &kindSpec{
	kind:  KindRoute,
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
			if m, isObj := svc.(map[string]any); !isObj || str(m["id"]) == "" {
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
	for _, k := range []*kindSpec{serviceSpec, routeSpec, consumerSpec, basicAuthSpec, keyAuthSpec, aclSpec, jwtSpec, hmacAuthSpec} {
		coreSpecs[k.kind] = k
	}
}

var consumerSpec = &kindSpec{
	kind:  KindConsumer,
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
		if str(obj["username"]) == "" && str(obj["custom_id"]) == "" {
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
	if id, ok := obj["id"]; ok && !isUUID(str(id)) {
		bad = append(bad, fieldError("id", "must be a valid UUID"))
	}
	if name, ok := obj["name"]; ok && !namePattern.MatchString(str(name)) {
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
		out = append(out, str(e))
	}
	return out
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidPattern.MatchString(s) }

// coreHandler serves one core entity collection. For entities nested under
// another (/services/{serviceId}/routes, /consumers/{consumerId}/basic-auth),
// parentIDVar names the parent's path variable.
type coreHandler struct {
	s           *Server
	spec        *kindSpec
	idVar       string
	parentIDVar string
}

// controlPlaneLocked returns the request's control plane, or writes a 404.
func (h *coreHandler) controlPlaneLocked(w http.ResponseWriter, r *http.Request, o *org) *controlPlane {
	cp := o.controlPlanes[r.PathValue("controlPlaneId")]
	if cp == nil {
		writeCoreError(w, http.StatusNotFound, codeNotFound, "control plane not found")
	}
	return cp
}

// findLocked finds an entity by ID, or else by name (username for consumers,
// Kong's endpoint key for credentials), among the entities of parentID when it is set.
func (h *coreHandler) findLocked(cp *controlPlane, idOrName, parentID string) *record {
	ofParent := func(rec *record) bool { return parentID == "" || parentOf(rec.obj, h.spec.parent) == parentID }
	recs := cp.entities[h.spec.kind]
	if rec, ok := recs[idOrName]; ok {
		if ofParent(rec) {
			return rec
		}
		return nil
	}
	for _, rec := range sortedRecords(recs) {
		if idOrName != "" && displayName(h.spec.kind, rec.obj) == idOrName && ofParent(rec) {
			return rec
		}
	}
	return nil
}

// writableLocked refuses changes to a control plane of type
// CLUSTER_TYPE_K8S_INGRESS_CONTROLLER: its configuration belongs to Kong
// Ingress Controller, and Konnect answers 403 "usage constraint error".
func (h *coreHandler) writableLocked(w http.ResponseWriter, cp *controlPlane) bool {
	config, _ := cp.obj["config"].(object)
	if str(config["cluster_type"]) != "CLUSTER_TYPE_K8S_INGRESS_CONTROLLER" {
		return true
	}
	writeCoreError(w, http.StatusForbidden, 7, "usage constraint error", errorDetail{
		Messages: []string{"operation not permitted on KIC cluster"},
	})
	return false
}

// parentLocked resolves the parent of a nested request (a route's service, a
// credential's consumer); ok is false (and a 404 written) when it does not exist.
func (h *coreHandler) parentLocked(w http.ResponseWriter, r *http.Request, cp *controlPlane) (string, bool) {
	if h.parentIDVar == "" {
		return "", true
	}
	parent := (&coreHandler{spec: h.spec.parentSpec}).findLocked(cp, r.PathValue(h.parentIDVar), "")
	if parent == nil {
		writeCoreNotFound(w)
		return "", false
	}
	return str(parent.obj["id"]), true
}

func (h *coreHandler) list(w http.ResponseWriter, r *http.Request, o *org) {
	q := r.URL.Query()
	size := 100
	if v := q.Get("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeValidationError(w, fieldError("size", "must be an integer between 1 and 1000"))
			return
		}
		size = n
	}
	var after int64
	if v := q.Get("offset"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, err2 := strconv.ParseInt(string(b), 10, 64)
		if err != nil || err2 != nil {
			writeValidationError(w, fieldError("offset", "invalid offset"))
			return
		}
		after = n
	}

	s := h.s
	s.mu.Lock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil {
		s.mu.Unlock()
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		s.mu.Unlock()
		return
	}
	var matching []*record
	for _, rec := range sortedRecords(cp.entities[h.spec.kind]) {
		if rec.seq > after && h.matches(rec.obj, q, parentID) {
			matching = append(matching, rec)
		}
	}
	data := []any{}
	for _, rec := range matching[:min(size, len(matching))] {
		data = append(data, deepCopy(rec.obj))
	}
	s.mu.Unlock()

	body := map[string]any{"data": data, "next": nil}
	if len(matching) > size {
		offset := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(matching[size-1].seq, 10)))
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("offset", offset)
		next.Set("size", strconv.Itoa(size))
		body["offset"] = offset
		body["next"] = r.URL.Path + "?" + next.Encode()
	}
	writeJSON(w, http.StatusOK, "application/json", body)
}

func (h *coreHandler) matches(obj object, q url.Values, parentID string) bool {
	if parentID != "" && parentOf(obj, h.spec.parent) != parentID {
		return false
	}
	if tags := q.Get("tags"); tags != "" {
		have := tagsOf(obj)
		if strings.Contains(tags, "/") {
			// a/b: any of the tags
			if !slices.ContainsFunc(strings.Split(tags, "/"), func(t string) bool { return slices.Contains(have, t) }) {
				return false
			}
		} else {
			// a,b: all of the tags
			for _, t := range strings.Split(tags, ",") {
				if !slices.Contains(have, t) {
					return false
				}
			}
		}
	}
	name := displayName(h.spec.kind, obj)
	if h.spec.kind == KindConsumer {
		name = str(obj["username"])
		if v, ok := q["custom_id"]; ok && str(obj["custom_id"]) != v[0] {
			return false
		}
	}
	if v, ok := q["filter[name][eq]"]; ok && name != v[0] {
		return false
	}
	if v, ok := q["filter[name][contains]"]; ok && !strings.Contains(name, v[0]) {
		return false
	}
	return true
}

func (h *coreHandler) get(w http.ResponseWriter, r *http.Request, o *org) {
	s := h.s
	s.mu.Lock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil {
		s.mu.Unlock()
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		s.mu.Unlock()
		return
	}
	rec := h.findLocked(cp, r.PathValue(h.idVar), parentID)
	if rec == nil {
		s.mu.Unlock()
		writeCoreNotFound(w)
		return
	}
	out := deepCopy(rec.obj)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, "application/json", out)
}

func (h *coreHandler) create(w http.ResponseWriter, r *http.Request, o *org) {
	h.write(w, r, o, "")
}

func (h *coreHandler) upsert(w http.ResponseWriter, r *http.Request, o *org) {
	id := r.PathValue(h.idVar)
	if !isUUID(id) {
		writeValidationError(w, fieldError("id", "must be a valid UUID"))
		return
	}
	h.write(w, r, o, id)
}

// write creates (pathID == "") or upserts (PUT /{pathID}) an entity.
func (h *coreHandler) write(w http.ResponseWriter, r *http.Request, o *org, pathID string) {
	body, err := readObject(r)
	if err != nil {
		writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "invalid request body: "+err.Error())
		return
	}
	if pathID != "" {
		if id, ok := body["id"]; ok && id != nil && str(id) != pathID {
			writeValidationError(w, fieldError("id", "must match the id in the path"))
			return
		}
		body["id"] = pathID
	}
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil || !h.writableLocked(w, cp) {
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		return
	}
	if parentID != "" {
		body[h.spec.parent] = map[string]any{"id": parentID}
	}
	obj, bad := h.spec.validate(body)
	if len(bad) > 0 {
		writeValidationError(w, bad...)
		return
	}
	recs := cp.entities[h.spec.kind]
	existing := recs[str(obj["id"])]
	if pathID == "" && existing != nil {
		s.writeUniqueViolation(w, "id", str(obj["id"]))
		return
	}
	if !h.constraintsLocked(w, cp, obj, existing) {
		return
	}
	status := h.storeLocked(recs, obj, existing, pathID)
	writeJSON(w, status, "application/json", deepCopy(obj))
}

// constraintsLocked checks what the body alone cannot: a route's service exists in the control plane, and unique
// fields are unique (per parent where Konnect says so). It writes the error and returns false if one fails.
func (h *coreHandler) constraintsLocked(w http.ResponseWriter, cp *controlPlane, obj map[string]any, existing *record) bool {
	s := h.s
	recs := cp.entities[h.spec.kind]
	// A route's service must exist in the same control plane.
	if svcID := routeServiceID(obj); h.spec.kind == KindRoute && svcID != "" {
		if _, ok := cp.entities[KindService][svcID]; !ok {
			writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "data constraint error", errorDetail{
				Kind:     "ERROR_TYPE_REFERENCE",
				Field:    "service.id",
				Messages: []string{fmt.Sprintf("invalid reference 'service.id: %s' (no such entry in 'service')", svcID)},
			})
			return false
		}
	}
	for _, field := range append(slices.Clone(h.spec.unique), h.spec.uniquePerParent...) {
		v := str(obj[field])
		if v == "" {
			continue
		}
		perParent := slices.Contains(h.spec.uniquePerParent, field)
		for _, other := range recs {
			if other != existing && str(other.obj[field]) == v && (!perParent || parentOf(other.obj, h.spec.parent) == parentOf(obj, h.spec.parent)) {
				s.writeUniqueViolation(w, field, v)
				return false
			}
		}
	}
	return true
}

// storeLocked stores obj in recs (created, or replacing existing) and returns the HTTP status of the answer.
func (h *coreHandler) storeLocked(recs map[string]*record, obj map[string]any, existing *record, pathID string) int {
	s := h.s
	now := s.now().Unix()
	status := http.StatusOK
	if existing == nil {
		if _, ok := obj["id"]; !ok {
			obj["id"] = s.newUUIDLocked()
		}
		obj["created_at"] = now
		if !h.spec.noUpdatedAt {
			obj["updated_at"] = now
		}
		recs[str(obj["id"])] = &record{seq: s.nextSeqLocked(), obj: obj}
		if pathID == "" {
			status = http.StatusCreated
		}
	} else {
		// PUT replaces the entity: what the body leaves out is back to its default.
		obj["created_at"] = existing.obj["created_at"]
		if !h.spec.noUpdatedAt {
			obj["updated_at"] = now
		}
		existing.obj = obj
	}
	return status
}

func (h *coreHandler) delete(w http.ResponseWriter, r *http.Request, o *org) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil || !h.writableLocked(w, cp) {
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		return
	}
	rec := h.findLocked(cp, r.PathValue(h.idVar), parentID)
	if rec == nil {
		writeCoreNotFound(w)
		return
	}
	id := str(rec.obj["id"])
	// Konnect refuses to delete a service that routes still reference.
	if h.spec.kind == KindService {
		for _, route := range cp.entities[KindRoute] {
			if routeServiceID(route.obj) == id {
				writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "data constraint error", errorDetail{
					Kind:     "ERROR_TYPE_REFERENCE",
					Messages: []string{"constraint failed (type: foreign) as route references this value"},
				})
				return
			}
		}
	}
	cp.deleteLocked(h.spec.kind, id)
	w.WriteHeader(http.StatusNoContent)
}
