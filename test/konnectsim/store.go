package konnectsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Kind names a kind of stored Konnect object.
type Kind string

// The kinds the simulator stores.
const (
	KindControlPlane Kind = "control-plane"
	KindService      Kind = "service"
	KindRoute        Kind = "route"
	KindConsumer     Kind = "consumer"
	// Credentials of consumers.
	KindBasicAuth Kind = "basic-auth"
	KindKeyAuth   Kind = "key-auth"
	KindACL       Kind = "acl"
	KindJWT       Kind = "jwt"
	KindHMACAuth  Kind = "hmac-auth"
)

// coreKinds are the kinds stored in a control plane, in the order Objects lists them.
var coreKinds = []Kind{KindService, KindRoute, KindConsumer, KindBasicAuth, KindKeyAuth, KindACL, KindJWT, KindHMACAuth}

// object is a stored entity exactly as the API serves it (decoded JSON: string,
// bool, int64, float64, nil, []any, map[string]any).
type object = map[string]any

// record is one stored object with its insertion sequence (the list order).
type record struct {
	seq int64
	obj object
}

type org struct {
	id, name      string
	createdAt     time.Time
	controlPlanes map[string]*controlPlane
}

type controlPlane struct {
	record
	entities map[Kind]map[string]*record
	// members are the IDs of a control plane group's members, in the order they were set.
	members []string
}

func newControlPlane(seq int64, obj object) *controlPlane {
	cp := &controlPlane{record: record{seq: seq, obj: obj}, entities: map[Kind]map[string]*record{}}
	for _, k := range coreKinds {
		cp.entities[k] = map[string]*record{}
	}
	return cp
}

// deleteLocked deletes an entity and what Konnect deletes with it: a consumer's credentials.
func (cp *controlPlane) deleteLocked(kind Kind, id string) {
	delete(cp.entities[kind], id)
	if kind != KindConsumer {
		return
	}
	for _, k := range coreKinds {
		for cid, rec := range cp.entities[k] {
			if parentOf(rec.obj, "consumer") == id {
				delete(cp.entities[k], cid)
			}
		}
	}
}

// deleteControlPlaneLocked deletes a control plane with everything in it, and takes it out of every group.
func (o *org) deleteControlPlaneLocked(id string) {
	delete(o.controlPlanes, id)
	for _, cp := range o.controlPlanes {
		cp.members = slices.DeleteFunc(cp.members, func(m string) bool { return m == id })
	}
}

func (s *Server) nextSeqLocked() int64 {
	s.seq++
	return s.seq
}

// Object describes one stored Konnect object, for assertions such as "no
// duplicates" and "nothing orphaned".
type Object struct {
	Kind           Kind   `json:"kind"`
	OrganizationID string `json:"organization_id"`
	// ControlPlaneID is the control plane a core entity belongs to; empty for control planes.
	ControlPlaneID string `json:"control_plane_id,omitempty"`
	ID             string `json:"id"`
	// Name is the name (the username for consumers, custom_id when there is no username).
	Name string `json:"name,omitempty"`
	// Tags of a core entity.
	Tags []string `json:"tags,omitempty"`
	// Labels of a control plane.
	Labels map[string]string `json:"labels,omitempty"`
	// JSON is a copy of the object as GET returns it.
	JSON map[string]any `json:"json"`
}

// Objects lists everything stored, in every organization: control planes
// first, each followed by its services, routes, consumers and credentials, in creation order.
func (s *Server) Objects() []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Object
	for _, o := range s.orgs {
		for _, cp := range sortedRecords(controlPlaneRecords(o)) {
			cpID := str(cp.obj["id"])
			out = append(out, Object{
				Kind:           KindControlPlane,
				OrganizationID: o.id,
				ID:             cpID,
				Name:           str(cp.obj["name"]),
				Labels:         labelsOf(cp.obj),
				JSON:           deepCopy(cp.obj).(object),
			})
			for _, kind := range coreKinds {
				for _, e := range sortedRecords(o.controlPlanes[cpID].entities[kind]) {
					out = append(out, Object{
						Kind:           kind,
						OrganizationID: o.id,
						ControlPlaneID: cpID,
						ID:             str(e.obj["id"]),
						Name:           displayName(kind, e.obj),
						Tags:           tagsOf(e.obj),
						JSON:           deepCopy(e.obj).(object),
					})
				}
			}
		}
	}
	return out
}

// ObjectsOf lists the stored objects of one kind.
func (s *Server) ObjectsOf(kind Kind) []Object {
	var out []Object
	for _, o := range s.Objects() {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// ErrNotFound is returned by Edit and Remove when no object has the given ID.
var ErrNotFound = errors.New("konnectsim: object not found")

// Edit changes a stored object out of band, as a person in the Konnect UI
// would: every key of patch is set on the object (a nil value removes the
// field; "labels" and "tags" replace the whole value) and updated_at moves.
// The id and created_at cannot be changed. No validation or uniqueness check is made, so tests can also create states
// the API would refuse.
func (s *Server) Edit(id string, patch map[string]any) error {
	norm, err := normalizeJSON(patch)
	if err != nil {
		return fmt.Errorf("konnectsim: edit %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kind, rec, _, _ := s.findLocked(id)
	if rec == nil {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	for k, v := range norm.(object) {
		switch k {
		case "id", "created_at", "updated_at":
			continue
		}
		if v == nil {
			delete(rec.obj, k)
			continue
		}
		rec.obj[k] = v
	}
	s.touchLocked(kind, rec.obj)
	return nil
}

// Remove deletes a stored object out of band (as in the Konnect UI). Removing
// a control plane removes everything in it; removing a service removes its routes.
func (s *Server) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kind, _, o, cp := s.findLocked(id)
	switch {
	case kind == "":
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	case kind == KindControlPlane:
		o.deleteControlPlaneLocked(id)
	case kind == KindService:
		for rid, r := range cp.entities[KindRoute] {
			if routeServiceID(r.obj) == id {
				delete(cp.entities[KindRoute], rid)
			}
		}
		delete(cp.entities[kind], id)
	default:
		cp.deleteLocked(kind, id)
	}
	return nil
}

// findLocked finds any object by ID.
func (s *Server) findLocked(id string) (Kind, *record, *org, *controlPlane) {
	for _, o := range s.orgs {
		if cp, ok := o.controlPlanes[id]; ok {
			return KindControlPlane, &cp.record, o, cp
		}
		for _, cp := range o.controlPlanes {
			for kind, recs := range cp.entities {
				if r, ok := recs[id]; ok {
					return kind, r, o, cp
				}
			}
		}
	}
	return "", nil, nil, nil
}

// touchLocked sets updated_at: an RFC 3339 string on control planes, Unix
// seconds on core entities (as Konnect does); credentials have none.
func (s *Server) touchLocked(kind Kind, obj object) {
	now := s.now()
	switch {
	case kind == KindControlPlane:
		obj["updated_at"] = formatTime(now)
	case coreSpecs[kind] != nil && coreSpecs[kind].noUpdatedAt:
		// Kong's credentials have created_at only.
	default:
		obj["updated_at"] = now.Unix()
	}
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func controlPlaneRecords(o *org) map[string]*record {
	out := make(map[string]*record, len(o.controlPlanes))
	for id, cp := range o.controlPlanes {
		out[id] = &cp.record
	}
	return out
}

func sortedRecords(m map[string]*record) []*record {
	out := slices.Collect(maps.Values(m))
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

func displayName(kind Kind, obj object) string {
	switch kind {
	case KindConsumer:
		if u := str(obj["username"]); u != "" {
			return u
		}
		return str(obj["custom_id"])
	case KindBasicAuth, KindHMACAuth:
		return str(obj["username"])
	case KindKeyAuth, KindJWT:
		return str(obj["key"])
	case KindACL:
		return str(obj["group"])
	}
	return str(obj["name"])
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func tagsOf(obj object) []string {
	list, _ := obj["tags"].([]any)
	var out []string
	for _, t := range list {
		out = append(out, str(t))
	}
	return out
}

func labelsOf(obj object) map[string]string {
	m, _ := obj["labels"].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = str(v)
	}
	return out
}

func routeServiceID(obj object) string { return parentOf(obj, "service") }

// parentOf returns the id in obj's reference field (e.g. a route's service.id, a credential's consumer.id).
func parentOf(obj object, field string) string {
	if field == "" {
		return ""
	}
	ref, _ := obj[field].(map[string]any)
	return str(ref["id"])
}

// deepCopy copies decoded JSON values.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	default:
		return v
	}
}

// decodeJSON decodes b into plain values where integral numbers are int64 and
// others float64, so stored objects compare and encode predictably.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			if i, err := t.Int64(); err == nil {
				return i
			}
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fixNumbers(e)
		}
	}
	return v
}

// normalizeJSON turns any Go value into the plain decoded JSON form.
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}
