package platform

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

var (
	clusterTypes = []string{
		"CLUSTER_TYPE_CONTROL_PLANE", "CLUSTER_TYPE_K8S_INGRESS_CONTROLLER", "CLUSTER_TYPE_CONTROL_PLANE_GROUP",
		"CLUSTER_TYPE_SERVERLESS", "CLUSTER_TYPE_KAFKA_NATIVE_EVENT_PROXY", "CLUSTER_TYPE_SERVERLESS_V1",
	}
	authTypes = []string{"pinned_client_certs", "pki_client_certs"}

	// Konnect label values (and keys) follow this pattern, 1 to 63 characters.
	labelPattern          = regexp.MustCompile(`^[a-z0-9A-Z]([a-z0-9A-Z-._]*[a-z0-9A-Z]+)?$`)
	reservedLabelPrefixes = []string{"kong", "konnect", "mesh", "kic", "_"}
)

const (
	defaultPageSize = 10
	maxPageSize     = 100
)

// validateControlPlaneFields checks the fields a create (create=true) or
// update request may carry, as Konnect does.
func validateControlPlaneFields(body object, create bool) []invalidParameter {
	allowed := []string{"name", "description", "auth_type", "proxy_urls", "labels"}
	if create {
		allowed = append(allowed, "cluster_type", "cloud_gateway")
	}
	var bad []invalidParameter
	for k := range body {
		if !slices.Contains(allowed, k) {
			bad = append(bad, invalidParameter{Field: k, Rule: "unknown_property", Source: "body", Reason: "is not a known property"})
		}
	}
	if v, ok := body["name"]; ok || create {
		name, isString := v.(string)
		switch {
		case !ok || v == nil:
			bad = append(bad, invalidParameter{Field: "name", Rule: "required", Source: "body", Reason: "is a required field"})
		case !isString:
			bad = append(bad, invalidParameter{Field: "name", Rule: "is_string", Source: "body", Reason: "must be a string"})
		case len(name) < 1 || len(name) > 256:
			bad = append(bad, invalidParameter{Field: "name", Rule: "invalid", Source: "body", Reason: "must have between 1 and 256 characters"})
		}
	}
	if v, ok := body["description"]; ok {
		if d, isString := v.(string); !isString || len(d) > 2048 {
			bad = append(bad, invalidParameter{Field: "description", Rule: "is_string", Source: "body", Reason: "must be a string of at most 2048 characters"})
		}
	}
	if v, ok := body["cluster_type"]; ok && !slices.Contains(clusterTypes, store.Str(v)) {
		bad = append(bad, invalidParameter{Field: "cluster_type", Rule: "invalid", Source: "body", Reason: "must be one of " + strings.Join(clusterTypes, ", ")})
	}
	if v, ok := body["auth_type"]; ok && !slices.Contains(authTypes, store.Str(v)) {
		bad = append(bad, invalidParameter{Field: "auth_type", Rule: "invalid", Source: "body", Reason: "must be one of " + strings.Join(authTypes, ", ")})
	}
	if v, ok := body["cloud_gateway"]; ok {
		if _, isBool := v.(bool); !isBool {
			bad = append(bad, invalidParameter{Field: "cloud_gateway", Rule: "is_boolean", Source: "body", Reason: "must be a boolean"})
		}
	}
	if v, ok := body["proxy_urls"]; ok {
		if _, isList := v.([]any); !isList {
			bad = append(bad, invalidParameter{Field: "proxy_urls", Rule: "is_array", Source: "body", Reason: "must be an array"})
		}
	}
	if v, ok := body["labels"]; ok && v != nil {
		bad = append(bad, validateLabels(v)...)
	}
	slices.SortFunc(bad, func(a, b invalidParameter) int { return strings.Compare(a.Field, b.Field) })
	return bad
}

func validateLabels(v any) []invalidParameter {
	labels, ok := v.(map[string]any)
	if !ok {
		return []invalidParameter{{Field: "labels", Rule: "is_object", Source: "body", Reason: "must be an object"}}
	}
	var bad []invalidParameter
	if len(labels) > 50 {
		bad = append(bad, invalidParameter{Field: "labels", Rule: "is_label", Source: "body", Reason: "must have at most 50 labels"})
	}
	for k, val := range labels {
		field := "labels." + k
		for _, p := range reservedLabelPrefixes {
			if strings.HasPrefix(k, p) {
				bad = append(bad, invalidParameter{Field: field, Rule: "is_label", Source: "body", Reason: fmt.Sprintf("keys cannot start with %q", p)})
			}
		}
		if len(k) < 1 || len(k) > 63 {
			bad = append(bad, invalidParameter{Field: field, Rule: "is_label", Source: "body", Reason: "keys must have between 1 and 63 characters"})
		}
		s, isString := val.(string)
		if !isString || len(s) < 1 || len(s) > 63 || !labelPattern.MatchString(s) {
			bad = append(bad, invalidParameter{Field: field, Rule: "is_label", Source: "body",
				Reason: "values must have between 1 and 63 characters, start and end with a letter or digit and contain only letters, digits, '-', '.' and '_'"})
		}
	}
	return bad
}

// CreateControlPlane serves POST /v2/control-planes: control plane names are unique per organization (409).
func (a *API) CreateControlPlane(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		a.writeProblem(w, http.StatusBadRequest, "Invalid request body", invalidParameter{Field: "body", Rule: "invalid", Source: "body", Reason: err.Error()})
		return
	}
	if bad := validateControlPlaneFields(body, true); len(bad) > 0 {
		a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", bad...)
		return
	}
	name := store.Str(body["name"])

	a.st.Lock()
	if controlPlaneByNameLocked(o, name) != nil {
		a.st.Unlock()
		// Control plane names are unique per organization.
		a.writeProblem(w, http.StatusConflict, fmt.Sprintf("Key (org_id, name)=(%s, %s) already exists.", o.ID, name))
		return
	}
	id := a.st.NewUUIDLocked()
	now := store.FormatTime(a.st.Now())
	clusterType := "CLUSTER_TYPE_CONTROL_PLANE"
	if v, ok := body["cluster_type"]; ok {
		clusterType = store.Str(v)
	}
	authType := "pinned_client_certs"
	if v, ok := body["auth_type"]; ok {
		authType = store.Str(v)
	}
	cloudGateway, _ := body["cloud_gateway"].(bool)
	proxyURLs, _ := body["proxy_urls"].([]any)
	if proxyURLs == nil {
		proxyURLs = []any{}
	}
	labels, _ := body["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	// Konnect gives each control plane its own endpoints for data planes.
	short := strings.ReplaceAll(id, "-", "")[:10]
	obj := object{
		"id":          id,
		"name":        name,
		"description": store.Str(body["description"]),
		"labels":      labels,
		"config": object{
			"control_plane_endpoint": "https://" + short + ".us.cp0.konghq.com",
			"telemetry_endpoint":     "https://" + short + ".us.tp0.konghq.com",
			"cluster_type":           clusterType,
			"auth_type":              authType,
			"cloud_gateway":          cloudGateway,
			"proxy_urls":             proxyURLs,
		},
		"created_at": now,
		"updated_at": now,
	}
	o.ControlPlanes[id] = store.NewControlPlane(a.st.NextSeqLocked(), obj)
	out := store.DeepCopy(obj)
	a.st.Unlock()

	store.WriteJSON(w, http.StatusCreated, "application/json", out)
}

func controlPlaneByNameLocked(o *store.Org, name string) *store.ControlPlane {
	for _, cp := range o.ControlPlanes {
		if store.Str(cp.Obj["name"]) == name {
			return cp
		}
	}
	return nil
}

// GetControlPlane serves GET /v2/control-planes/{controlPlaneId}.
func (a *API) GetControlPlane(w http.ResponseWriter, r *http.Request, o *store.Org) {
	id := r.PathValue("controlPlaneId")
	a.st.Lock()
	cp := o.ControlPlanes[id]
	var out any
	if cp != nil {
		out = store.DeepCopy(cp.Obj)
	}
	a.st.Unlock()
	if cp == nil {
		a.writeProblem(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id))
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// UpdateControlPlane serves PATCH /v2/control-planes/{controlPlaneId}; labels, when sent, replace the whole map.
func (a *API) UpdateControlPlane(w http.ResponseWriter, r *http.Request, o *store.Org) {
	id := r.PathValue("controlPlaneId")
	body, err := store.ReadObject(r)
	if err != nil {
		a.writeProblem(w, http.StatusBadRequest, "Invalid request body", invalidParameter{Field: "body", Rule: "invalid", Source: "body", Reason: err.Error()})
		return
	}
	if bad := validateControlPlaneFields(body, false); len(bad) > 0 {
		a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", bad...)
		return
	}

	a.st.Lock()
	cp := o.ControlPlanes[id]
	if cp == nil {
		a.st.Unlock()
		a.writeProblem(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id))
		return
	}
	if name, ok := body["name"]; ok {
		if other := controlPlaneByNameLocked(o, store.Str(name)); other != nil && other != cp {
			a.st.Unlock()
			a.writeProblem(w, http.StatusConflict, fmt.Sprintf("Key (org_id, name)=(%s, %s) already exists.", o.ID, store.Str(name)))
			return
		}
		cp.Obj["name"] = name
	}
	if v, ok := body["description"]; ok {
		cp.Obj["description"] = v
	}
	config := cp.Obj["config"].(object)
	if v, ok := body["auth_type"]; ok {
		config["auth_type"] = v
	}
	if v, ok := body["proxy_urls"]; ok {
		config["proxy_urls"] = v
	}
	// PATCH replaces the whole labels map (send every label to keep it).
	if v, ok := body["labels"]; ok {
		labels, _ := v.(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		cp.Obj["labels"] = labels
	}
	a.st.TouchLocked(store.KindControlPlane, cp.Obj)
	out := store.DeepCopy(cp.Obj)
	a.st.Unlock()

	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// DeleteControlPlane deletes a control plane and, as Konnect does, its whole configuration.
func (a *API) DeleteControlPlane(w http.ResponseWriter, r *http.Request, o *store.Org) {
	id := r.PathValue("controlPlaneId")
	a.st.Lock()
	_, found := o.ControlPlanes[id]
	o.DeleteControlPlaneLocked(id)
	a.st.Unlock()
	if !found {
		a.writeProblem(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ListControlPlanes serves page-number pagination: page[size] (default 10,
// at most 100), page[number] (from 1); meta.page.total is the number of
// matching control planes. Filters: filter[name][eq|neq|contains],
// filter[id][eq|oeq], filter[cluster_type][eq|neq|oeq], filter[cloud_gateway],
// and labels=key:value,key (every term must match; a bare key means "has the label").
func (a *API) ListControlPlanes(w http.ResponseWriter, r *http.Request, o *store.Org) {
	q := r.URL.Query()
	size, number := defaultPageSize, 1
	var bad []invalidParameter
	if v := q.Get("page[size]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			bad = append(bad, invalidParameter{Field: "page[size]", Rule: "invalid", Source: "query", Reason: fmt.Sprintf("must be an integer between 1 and %d", maxPageSize)})
		}
		size = n
	}
	if v := q.Get("page[number]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			bad = append(bad, invalidParameter{Field: "page[number]", Rule: "invalid", Source: "query", Reason: "must be an integer greater than 0"})
		}
		number = n
	}
	sortKey := q.Get("sort")
	if sortKey != "" && sortKey != "created_at" && sortKey != "-created_at" {
		bad = append(bad, invalidParameter{Field: "sort", Rule: "invalid", Source: "query", Reason: "supported sort attributes are: created_at"})
	}
	if len(bad) > 0 {
		a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", bad...)
		return
	}

	a.st.Lock()
	var matching []any
	for _, rec := range store.SortedRecords(store.ControlPlaneRecords(o)) {
		if controlPlaneMatches(rec.Obj, q) {
			matching = append(matching, store.DeepCopy(rec.Obj))
		}
	}
	a.st.Unlock()

	if sortKey == "-created_at" {
		slices.Reverse(matching)
	}
	data := []any{}
	if start := (number - 1) * size; start < len(matching) {
		data = matching[start:min(start+size, len(matching))]
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{
		"meta": map[string]any{"page": map[string]any{"number": number, "size": size, "total": len(matching)}},
		"data": data,
	})
}

func controlPlaneMatches(cp object, q map[string][]string) bool {
	config, _ := cp["config"].(object)
	fields := map[string]string{
		"name":          store.Str(cp["name"]),
		"id":            store.Str(cp["id"]),
		"cluster_type":  store.Str(config["cluster_type"]),
		"cloud_gateway": strconv.FormatBool(config["cloud_gateway"] == true),
	}
	if !store.MatchFilters(fields, q) {
		return false
	}
	if filter := q["labels"]; len(filter) > 0 && filter[0] != "" {
		labels := store.LabelsOf(cp)
		for _, term := range strings.Split(filter[0], ",") {
			k, v, hasValue := strings.Cut(strings.TrimSpace(term), ":")
			got, present := labels[k]
			if !present || hasValue && got != v {
				return false
			}
		}
	}
	return true
}
