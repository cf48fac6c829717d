package coreentities

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Collection serves one core entity collection. For entities nested under
// another (/services/{serviceId}/routes, /consumers/{consumerId}/basic-auth),
// parentIDVar names the parent's path variable.
type Collection struct {
	a           *API
	spec        *kindSpec
	idVar       string
	parentIDVar string
}

// controlPlaneLocked returns the request's control plane, or writes a 404.
func (h *Collection) controlPlaneLocked(w http.ResponseWriter, r *http.Request, o *store.Org) *store.ControlPlane {
	cp := o.ControlPlanes[r.PathValue("controlPlaneId")]
	if cp == nil {
		writeCoreError(w, http.StatusNotFound, codeNotFound, "control plane not found")
	}
	return cp
}

// findLocked finds an entity by ID, or else by name (username for consumers,
// Kong's endpoint key for credentials), among the entities of parentID when it is set.
func (h *Collection) findLocked(cp *store.ControlPlane, idOrName, parentID string) *store.Record {
	ofParent := func(rec *store.Record) bool {
		return parentID == "" || store.ParentOf(rec.Obj, h.spec.parent) == parentID
	}
	recs := cp.Entities[h.spec.kind]
	if rec, ok := recs[idOrName]; ok {
		if ofParent(rec) {
			return rec
		}
		return nil
	}
	for _, rec := range store.SortedRecords(recs) {
		if idOrName != "" && store.DisplayName(h.spec.kind, rec.Obj) == idOrName && ofParent(rec) {
			return rec
		}
	}
	return nil
}

// writableLocked refuses changes to a control plane of type
// CLUSTER_TYPE_K8S_INGRESS_CONTROLLER: its configuration belongs to Kong
// Ingress Controller, and Konnect answers 403 "usage constraint error".
func (h *Collection) writableLocked(w http.ResponseWriter, cp *store.ControlPlane) bool {
	config, _ := cp.Obj["config"].(object)
	if store.Str(config["cluster_type"]) != "CLUSTER_TYPE_K8S_INGRESS_CONTROLLER" {
		return true
	}
	writeCoreError(w, http.StatusForbidden, 7, "usage constraint error", errorDetail{
		Messages: []string{"operation not permitted on KIC cluster"},
	})
	return false
}

// parentLocked resolves the parent of a nested request (a route's service, a
// credential's consumer); ok is false (and a 404 written) when it does not exist.
func (h *Collection) parentLocked(w http.ResponseWriter, r *http.Request, cp *store.ControlPlane) (string, bool) {
	if h.parentIDVar == "" {
		return "", true
	}
	parent := (&Collection{spec: h.spec.parentSpec}).findLocked(cp, r.PathValue(h.parentIDVar), "")
	if parent == nil {
		writeCoreNotFound(w)
		return "", false
	}
	return store.Str(parent.Obj["id"]), true
}

func (h *Collection) List(w http.ResponseWriter, r *http.Request, o *store.Org) {
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

	st := h.a.st
	st.Lock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil {
		st.Unlock()
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		st.Unlock()
		return
	}
	var matching []*store.Record
	for _, rec := range store.SortedRecords(cp.Entities[h.spec.kind]) {
		if rec.Seq > after && h.matches(rec.Obj, q, parentID) {
			matching = append(matching, rec)
		}
	}
	data := []any{}
	for _, rec := range matching[:min(size, len(matching))] {
		data = append(data, store.DeepCopy(rec.Obj))
	}
	st.Unlock()

	body := map[string]any{"data": data, "next": nil}
	if len(matching) > size {
		offset := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(matching[size-1].Seq, 10)))
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("offset", offset)
		next.Set("size", strconv.Itoa(size))
		body["offset"] = offset
		body["next"] = r.URL.Path + "?" + next.Encode()
	}
	store.WriteJSON(w, http.StatusOK, "application/json", body)
}

func (h *Collection) matches(obj object, q url.Values, parentID string) bool {
	if parentID != "" && store.ParentOf(obj, h.spec.parent) != parentID {
		return false
	}
	if tags := q.Get("tags"); tags != "" {
		have := store.TagsOf(obj)
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
	name := store.DisplayName(h.spec.kind, obj)
	if h.spec.kind == store.KindConsumer {
		name = store.Str(obj["username"])
		if v, ok := q["custom_id"]; ok && store.Str(obj["custom_id"]) != v[0] {
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

func (h *Collection) Get(w http.ResponseWriter, r *http.Request, o *store.Org) {
	st := h.a.st
	st.Lock()
	cp := h.controlPlaneLocked(w, r, o)
	if cp == nil {
		st.Unlock()
		return
	}
	parentID, ok := h.parentLocked(w, r, cp)
	if !ok {
		st.Unlock()
		return
	}
	rec := h.findLocked(cp, r.PathValue(h.idVar), parentID)
	if rec == nil {
		st.Unlock()
		writeCoreNotFound(w)
		return
	}
	out := store.DeepCopy(rec.Obj)
	if h.spec.kind == store.KindConsumerGroup {
		// GET of one consumer group answers it wrapped, with its consumers.
		out = map[string]any{"consumer_group": out, "consumers": groupConsumersLocked(cp, store.Str(rec.Obj["id"]))}
	}
	st.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

func (h *Collection) Create(w http.ResponseWriter, r *http.Request, o *store.Org) {
	h.write(w, r, o, "")
}

func (h *Collection) Upsert(w http.ResponseWriter, r *http.Request, o *store.Org) {
	id := r.PathValue(h.idVar)
	if !isUUID(id) {
		writeValidationError(w, fieldError("id", "must be a valid UUID"))
		return
	}
	h.write(w, r, o, id)
}

// write creates (pathID == "") or upserts (PUT /{pathID}) an entity.
func (h *Collection) write(w http.ResponseWriter, r *http.Request, o *store.Org, pathID string) {
	body, err := store.ReadObject(r)
	if err != nil {
		writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "invalid request body: "+err.Error())
		return
	}
	if pathID != "" {
		if id, ok := body["id"]; ok && id != nil && store.Str(id) != pathID {
			writeValidationError(w, fieldError("id", "must match the id in the path"))
			return
		}
		body["id"] = pathID
	}
	st := h.a.st
	st.Lock()
	defer st.Unlock()
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
	recs := cp.Entities[h.spec.kind]
	existing := recs[store.Str(obj["id"])]
	if pathID == "" && existing != nil {
		h.a.writeUniqueViolation(w, "id", store.Str(obj["id"]))
		return
	}
	if !h.constraintsLocked(w, cp, obj, existing) {
		return
	}
	status := h.storeLocked(recs, obj, existing, pathID)
	store.WriteJSON(w, status, "application/json", store.DeepCopy(obj))
}

// constraintsLocked checks what the body alone cannot: a route's service exists in the control plane, and unique
// fields are unique (per parent where Konnect says so). It writes the error and returns false if one fails.
func (h *Collection) constraintsLocked(w http.ResponseWriter, cp *store.ControlPlane, obj map[string]any, existing *store.Record) bool {
	recs := cp.Entities[h.spec.kind]
	// What the entity names (a route's service, a plugin's scope) must exist in the same control plane.
	for _, field := range slices.Sorted(maps.Keys(h.spec.refs)) {
		kind := h.spec.refs[field]
		if id := store.ParentOf(obj, field); id != "" && cp.Entities[kind][id] == nil {
			writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "data constraint error", errorDetail{
				Kind:     "ERROR_TYPE_REFERENCE",
				Field:    field + ".id",
				Messages: []string{fmt.Sprintf("invalid reference '%s.id: %s' (no such entry in '%s')", field, id, coreSpecs[kind].label)},
			})
			return false
		}
	}
	if h.spec.uniqueKey != nil {
		key, label := h.spec.uniqueKey(obj)
		for _, other := range recs {
			if other != existing && func() bool { k, _ := h.spec.uniqueKey(other.Obj); return k == key }() {
				h.a.writeUniqueViolation(w, "cache_key", label)
				return false
			}
		}
	}
	for _, field := range append(slices.Clone(h.spec.unique), h.spec.uniquePerParent...) {
		v := store.Str(obj[field])
		if v == "" {
			continue
		}
		perParent := slices.Contains(h.spec.uniquePerParent, field)
		for _, other := range recs {
			if other != existing && store.Str(other.Obj[field]) == v && (!perParent || store.ParentOf(other.Obj, h.spec.parent) == store.ParentOf(obj, h.spec.parent)) {
				h.a.writeUniqueViolation(w, field, v)
				return false
			}
		}
	}
	return true
}

// storeLocked stores obj in recs (created, or replacing existing) and returns the HTTP status of the answer.
func (h *Collection) storeLocked(recs map[string]*store.Record, obj map[string]any, existing *store.Record, pathID string) int {
	st := h.a.st
	now := st.Now().Unix()
	status := http.StatusOK
	if existing == nil {
		if _, ok := obj["id"]; !ok {
			obj["id"] = st.NewUUIDLocked()
		}
		obj["created_at"] = now
		if h.spec.kind.HasUpdatedAt() {
			obj["updated_at"] = now
		}
		recs[store.Str(obj["id"])] = &store.Record{Seq: st.NextSeqLocked(), Obj: obj}
		if pathID == "" {
			status = http.StatusCreated
		}
	} else {
		// PUT replaces the entity: what the body leaves out is back to its default.
		obj["created_at"] = existing.Obj["created_at"]
		if h.spec.kind.HasUpdatedAt() {
			obj["updated_at"] = now
		}
		existing.Obj = obj
	}
	return status
}

func (h *Collection) Delete(w http.ResponseWriter, r *http.Request, o *store.Org) {
	st := h.a.st
	st.Lock()
	defer st.Unlock()
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
	id := store.Str(rec.Obj["id"])
	// Konnect refuses to delete a service that routes still reference.
	if h.spec.kind == store.KindService {
		for _, route := range cp.Entities[store.KindRoute] {
			if routeServiceID(route.Obj) == id {
				writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "data constraint error", errorDetail{
					Kind:     "ERROR_TYPE_REFERENCE",
					Messages: []string{"constraint failed (type: foreign) as route references this value"},
				})
				return
			}
		}
	}
	cp.DeleteLocked(h.spec.kind, id)
	w.WriteHeader(http.StatusNoContent)
}
