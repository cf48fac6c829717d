// Package store holds the state of the Konnect API simulator: organizations,
// their tokens, control planes and the core entities in them, each stored
// exactly as the API serves it (decoded JSON), under one lock.
//
// The HTTP handlers of the platform APIs (package platform) and of the core
// entities (package coreentities) read and change it; package konnectsim
// lists and edits it out of band.
package store

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
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
	// KindConsumerGroup is a consumer group; its members are kept apart (ControlPlane.GroupConsumers).
	KindConsumerGroup Kind = "consumer-group"
	// KindPlugin is a plugin, global or scoped to a service, route, consumer or consumer group.
	KindPlugin Kind = "plugin"
	// Upstreams and their targets; certificates, their SNIs and CA certificates; keys and key sets; vaults; and
	// the data plane client certificates of a control plane (not a core entity: served apart, without tags).
	KindUpstream      Kind = "upstream"
	KindTarget        Kind = "target"
	KindCertificate   Kind = "certificate"
	KindCACertificate Kind = "ca-certificate"
	KindSNI           Kind = "sni"
	KindKey           Kind = "key"
	KindKeySet        Kind = "key-set"
	KindVault         Kind = "vault"
	KindDPCertificate Kind = "dp-client-certificate"
)

// CoreKinds are the kinds stored in a control plane, in the order Objects lists them.
var CoreKinds = []Kind{KindService, KindRoute, KindConsumer, KindBasicAuth, KindKeyAuth, KindACL, KindJWT, KindHMACAuth,
	KindConsumerGroup, KindPlugin, KindUpstream, KindTarget, KindCertificate, KindCACertificate, KindSNI, KindKeySet,
	KindKey, KindVault, KindDPCertificate}

// cascades are the entities Konnect deletes with their parent (Kong's on_delete cascade): the child kind and the
// child's field naming the parent.
var cascades = map[Kind]struct {
	child Kind
	field string
}{
	KindUpstream:    {KindTarget, "upstream"},
	KindCertificate: {KindSNI, "certificate"},
	KindKeySet:      {KindKey, "set"},
}

// pluginScopes are the fields of a plugin naming what it is scoped to, with the kind each names.
var pluginScopes = map[string]Kind{"service": KindService, "route": KindRoute, "consumer": KindConsumer, "consumer_group": KindConsumerGroup}

// HasUpdatedAt reports whether objects of kind carry updated_at: Kong's
// credentials have created_at only.
func (k Kind) HasUpdatedAt() bool {
	switch k {
	case KindBasicAuth, KindKeyAuth, KindACL, KindJWT, KindHMACAuth:
		return false
	}
	return true
}

// object is a stored entity exactly as the API serves it (decoded JSON: string,
// bool, int64, float64, nil, []any, map[string]any).
type object = map[string]any

// Record is one stored object with its insertion sequence (the list order).
type Record struct {
	// Seq orders records by creation.
	Seq int64
	// Obj is the object as the API serves it.
	Obj map[string]any
}

// Org is a Konnect organization and its control planes.
type Org struct {
	// ID and Name are what GET /v3/organizations/me returns.
	ID, Name string
	// CreatedAt is when the organization was added.
	CreatedAt time.Time
	// ControlPlanes by ID.
	ControlPlanes map[string]*ControlPlane
}

// ControlPlane is a stored control plane and the core entities in it.
type ControlPlane struct {
	Record
	// Entities are the core entities by kind, then by ID.
	Entities map[Kind]map[string]*Record
	// Members are the IDs of a control plane group's members, in the order they were set.
	Members []string
	// GroupConsumers are the members of each consumer group: group ID -> consumer ID -> when it was added (a
	// sequence number, the list order).
	GroupConsumers map[string]map[string]int64
}

// NewControlPlane returns a control plane with no entities.
func NewControlPlane(seq int64, obj map[string]any) *ControlPlane {
	cp := &ControlPlane{Record: Record{Seq: seq, Obj: obj}, Entities: map[Kind]map[string]*Record{}, GroupConsumers: map[string]map[string]int64{}}
	for _, k := range CoreKinds {
		cp.Entities[k] = map[string]*Record{}
	}
	return cp
}

// DeleteLocked deletes an entity and what Konnect deletes with it: a consumer's credentials, the plugins scoped to
// the entity, the consumer group memberships of a consumer or a consumer group, an upstream's targets, a
// certificate's SNIs and a key set's keys.
func (cp *ControlPlane) DeleteLocked(kind Kind, id string) {
	delete(cp.Entities[kind], id)
	for field, k := range pluginScopes {
		if k != kind {
			continue
		}
		for pid, rec := range cp.Entities[KindPlugin] {
			if ParentOf(rec.Obj, field) == id {
				delete(cp.Entities[KindPlugin], pid)
			}
		}
	}
	if c, ok := cascades[kind]; ok {
		for cid, rec := range cp.Entities[c.child] {
			if ParentOf(rec.Obj, c.field) == id {
				delete(cp.Entities[c.child], cid)
			}
		}
	}
	switch kind {
	case KindConsumerGroup:
		delete(cp.GroupConsumers, id)
	case KindConsumer:
		for _, members := range cp.GroupConsumers {
			delete(members, id)
		}
		for _, k := range CoreKinds {
			for cid, rec := range cp.Entities[k] {
				if k != KindPlugin && ParentOf(rec.Obj, "consumer") == id {
					delete(cp.Entities[k], cid)
				}
			}
		}
	}
}

// DeleteControlPlaneLocked deletes a control plane with everything in it, and takes it out of every group.
func (o *Org) DeleteControlPlaneLocked(id string) {
	delete(o.ControlPlanes, id)
	for _, cp := range o.ControlPlanes {
		cp.Members = slices.DeleteFunc(cp.Members, func(m string) bool { return m == id })
	}
}

// Store is the simulator's state. Lock guards the organizations, their
// control planes and entities, the sequence and the random generator; the
// methods whose names end in Locked must be called with it held, the others
// take it themselves.
type Store struct {
	mu     sync.Mutex
	now    func() time.Time
	rnd    *rand.Rand
	seq    int64
	orgs   []*Org
	tokens map[string]*Org
}

// New returns an empty store whose ids and random draws follow seed, and whose clock is now.
func New(seed uint64, now func() time.Time) *Store {
	return &Store{
		now:    now,
		rnd:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		tokens: map[string]*Org{},
	}
}

// Lock locks the store.
func (s *Store) Lock() { s.mu.Lock() }

// Unlock unlocks the store.
func (s *Store) Unlock() { s.mu.Unlock() }

// Now returns the store's current time.
func (s *Store) Now() time.Time { return s.now() }

// Uint64 draws from the seeded generator.
func (s *Store) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rnd.Uint64()
}

// Float64 draws from the seeded generator, in [0, 1).
func (s *Store) Float64() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rnd.Float64()
}

// NextSeqLocked returns the sequence number of a new record.
func (s *Store) NextSeqLocked() int64 {
	s.seq++
	return s.seq
}

// NewUUIDLocked returns a random (version 4) UUID drawn from the seeded generator.
func (s *Store) NewUUIDLocked() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := s.rnd.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// AddOrganization adds an organization (a generated ID when id is empty,
// "Simulated Organization" when name is) that tokens authenticate as.
func (s *Store) AddOrganization(id, name string, tokens []string) *Org {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		id = s.NewUUIDLocked()
	}
	if name == "" {
		name = "Simulated Organization"
	}
	og := &Org{ID: id, Name: name, CreatedAt: s.now().UTC(), ControlPlanes: map[string]*ControlPlane{}}
	s.orgs = append(s.orgs, og)
	for _, t := range tokens {
		s.tokens[t] = og
	}
	return og
}

// AddToken makes token authenticate as the organization orgID.
func (s *Store) AddToken(orgID, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orgs {
		if o.ID == orgID {
			s.tokens[token] = o
			return nil
		}
	}
	return fmt.Errorf("%w: organization %s", ErrNotFound, orgID)
}

// RevokeToken stops accepting token.
func (s *Store) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, token)
}

// OrgByToken returns the organization that token authenticates as, or nil.
func (s *Store) OrgByToken(token string) *Org {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token]
}

// OrgByID returns the organization id, or nil.
func (s *Store) OrgByID(id string) *Org {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *Org
	for _, o := range s.orgs {
		if o.ID == id {
			found = o
		}
	}
	return found
}

// GroupMembers returns the member IDs of the control plane group groupID (nil if there is no such group).
func (s *Store) GroupMembers(groupID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orgs {
		if cp := o.ControlPlanes[groupID]; cp != nil {
			return slices.Clone(cp.Members)
		}
	}
	return nil
}

// GroupConsumers returns the IDs of the consumers in the consumer group groupID, sorted.
func (s *Store) GroupConsumers(groupID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orgs {
		for _, cp := range o.ControlPlanes {
			if members, ok := cp.GroupConsumers[groupID]; ok {
				return slices.Sorted(maps.Keys(members))
			}
		}
	}
	return nil
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
func (s *Store) Objects() []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Object
	for _, o := range s.orgs {
		for _, cp := range SortedRecords(ControlPlaneRecords(o)) {
			cpID := Str(cp.Obj["id"])
			out = append(out, Object{
				Kind:           KindControlPlane,
				OrganizationID: o.ID,
				ID:             cpID,
				Name:           Str(cp.Obj["name"]),
				Labels:         LabelsOf(cp.Obj),
				JSON:           DeepCopy(cp.Obj).(object),
			})
			for _, kind := range CoreKinds {
				for _, e := range SortedRecords(o.ControlPlanes[cpID].Entities[kind]) {
					out = append(out, Object{
						Kind:           kind,
						OrganizationID: o.ID,
						ControlPlaneID: cpID,
						ID:             Str(e.Obj["id"]),
						Name:           DisplayName(kind, e.Obj),
						Tags:           TagsOf(e.Obj),
						JSON:           DeepCopy(e.Obj).(object),
					})
				}
			}
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
func (s *Store) Edit(id string, patch map[string]any) error {
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
			delete(rec.Obj, k)
			continue
		}
		rec.Obj[k] = v
	}
	s.TouchLocked(kind, rec.Obj)
	return nil
}

// Remove deletes a stored object out of band (as in the Konnect UI). Removing
// a control plane removes everything in it; removing a service removes its routes.
func (s *Store) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kind, _, o, cp := s.findLocked(id)
	switch {
	case kind == "":
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	case kind == KindControlPlane:
		o.DeleteControlPlaneLocked(id)
	case kind == KindService:
		for rid, r := range cp.Entities[KindRoute] {
			if ParentOf(r.Obj, "service") == id {
				cp.DeleteLocked(KindRoute, rid)
			}
		}
		cp.DeleteLocked(kind, id)
	default:
		cp.DeleteLocked(kind, id)
	}
	return nil
}

// findLocked finds any object by ID.
func (s *Store) findLocked(id string) (Kind, *Record, *Org, *ControlPlane) {
	for _, o := range s.orgs {
		if cp, ok := o.ControlPlanes[id]; ok {
			return KindControlPlane, &cp.Record, o, cp
		}
		for _, cp := range o.ControlPlanes {
			for kind, recs := range cp.Entities {
				if r, ok := recs[id]; ok {
					return kind, r, o, cp
				}
			}
		}
	}
	return "", nil, nil, nil
}

// TouchLocked sets updated_at: an RFC 3339 string on control planes, Unix
// seconds on core entities (as Konnect does); credentials have none.
func (s *Store) TouchLocked(kind Kind, obj map[string]any) {
	now := s.now()
	switch {
	case kind == KindControlPlane:
		obj["updated_at"] = FormatTime(now)
	case !kind.HasUpdatedAt():
		// Kong's credentials have created_at only.
	default:
		obj["updated_at"] = now.Unix()
	}
}

// FormatTime renders t as the platform APIs do.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// ControlPlaneRecords returns the records of o's control planes by ID.
func ControlPlaneRecords(o *Org) map[string]*Record {
	out := make(map[string]*Record, len(o.ControlPlanes))
	for id, cp := range o.ControlPlanes {
		out[id] = &cp.Record
	}
	return out
}

// SortedRecords returns the records of m in creation order.
func SortedRecords(m map[string]*Record) []*Record {
	out := slices.Collect(maps.Values(m))
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// DisplayName is the name of an object of kind: the username of a consumer
// (custom_id when there is none), the username, key or group of a credential, else the name.
func DisplayName(kind Kind, obj map[string]any) string {
	switch kind {
	case KindConsumer:
		if u := Str(obj["username"]); u != "" {
			return u
		}
		return Str(obj["custom_id"])
	case KindBasicAuth, KindHMACAuth:
		return Str(obj["username"])
	case KindKeyAuth, KindJWT:
		return Str(obj["key"])
	case KindACL:
		return Str(obj["group"])
	case KindTarget:
		return Str(obj["target"])
	case KindKey:
		return Str(obj["kid"])
	case KindVault:
		return Str(obj["prefix"])
	}
	return Str(obj["name"])
}
