package coreentities

import (
	"maps"
	"net/http"
	"slices"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Consumer group membership, from either side: /consumers/{consumerId}/consumer_groups[/{consumerGroupId}] and
// /consumer_groups/{consumerGroupId}/consumers[/{consumerId}]. Adding names the other entity by ID or name and
// answers 201 with the entity and its (new) list; adding twice is a unique violation; removing a membership that
// does not exist is 404. The lists answer every item in one page.

// Membership serves the memberships of consumer groups. fromConsumer says the path is under a consumer.
type Membership struct {
	a            *API
	fromConsumer bool
}

// Membership returns the handlers of the membership endpoints under consumers (fromConsumer) or consumer groups.
func (a *API) Membership(fromConsumer bool) *Membership {
	return &Membership{a: a, fromConsumer: fromConsumer}
}

// sides are the collections of the path's entity (self) and of the entities listed (other), with their path variables.
func (m *Membership) sides() (self, other *Collection) {
	consumers := &Collection{a: m.a, spec: consumerSpec, idVar: "consumerId"}
	groups := &Collection{a: m.a, spec: consumerGroupSpec, idVar: "consumerGroupId"}
	if m.fromConsumer {
		return consumers, groups
	}
	return groups, consumers
}

// pair orders two IDs as (group, consumer).
func (m *Membership) pair(selfID, otherID string) (string, string) {
	if m.fromConsumer {
		return otherID, selfID
	}
	return selfID, otherID
}

// groupConsumersLocked returns the consumers of a group, in the order they were added.
func groupConsumersLocked(cp *store.ControlPlane, groupID string) []any {
	return membersLocked(cp, store.KindConsumer, func(id string) (int64, bool) {
		seq, ok := cp.GroupConsumers[groupID][id]
		return seq, ok
	})
}

// consumerGroupsLocked returns the groups a consumer is in, in the order it joined them.
func consumerGroupsLocked(cp *store.ControlPlane, consumerID string) []any {
	return membersLocked(cp, store.KindConsumerGroup, func(id string) (int64, bool) {
		seq, ok := cp.GroupConsumers[id][consumerID]
		return seq, ok
	})
}

func membersLocked(cp *store.ControlPlane, kind store.Kind, member func(id string) (int64, bool)) []any {
	type item struct {
		seq int64
		obj any
	}
	var items []item
	for id, rec := range cp.Entities[kind] {
		if seq, ok := member(id); ok {
			items = append(items, item{seq, store.DeepCopy(rec.Obj)})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return int(a.seq - b.seq) })
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, it.obj)
	}
	return out
}

// selfLocked finds the control plane and the path's entity, or writes a 404.
func (m *Membership) selfLocked(w http.ResponseWriter, r *http.Request, o *store.Org) (*store.ControlPlane, *store.Record) {
	self, _ := m.sides()
	cp := self.controlPlaneLocked(w, r, o)
	if cp == nil {
		return nil, nil
	}
	rec := self.findLocked(cp, r.PathValue(self.idVar), "")
	if rec == nil {
		writeCoreNotFound(w)
		return nil, nil
	}
	return cp, rec
}

// listLocked is the list of the other side of the path's entity.
func (m *Membership) listLocked(cp *store.ControlPlane, selfID string) []any {
	if m.fromConsumer {
		return consumerGroupsLocked(cp, selfID)
	}
	return groupConsumersLocked(cp, selfID)
}

// List answers the groups of a consumer, or the consumers of a group.
func (m *Membership) List(w http.ResponseWriter, r *http.Request, o *store.Org) {
	m.a.st.Lock()
	defer m.a.st.Unlock()
	cp, rec := m.selfLocked(w, r, o)
	if rec == nil {
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"data": m.listLocked(cp, store.Str(rec.Obj["id"])), "next": nil})
}

// Add adds a membership; the body names the other side as {"group": ...} (under a consumer) or {"consumer": ...}.
func (m *Membership) Add(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		writeCoreError(w, http.StatusBadRequest, codeInvalidArgument, "invalid request body: "+err.Error())
		return
	}
	field := "consumer"
	if m.fromConsumer {
		field = "group"
	}
	m.a.st.Lock()
	defer m.a.st.Unlock()
	cp, rec := m.selfLocked(w, r, o)
	if rec == nil {
		return
	}
	_, other := m.sides()
	name := store.Str(body[field])
	if name == "" {
		writeValidationError(w, fieldError(field, "required field missing"))
		return
	}
	found := other.findLocked(cp, name, "")
	if found == nil {
		writeCoreNotFound(w)
		return
	}
	groupID, consumerID := m.pair(store.Str(rec.Obj["id"]), store.Str(found.Obj["id"]))
	if _, ok := cp.GroupConsumers[groupID][consumerID]; ok {
		m.a.writeUniqueViolation(w, "consumer_group_consumer", groupID+":"+consumerID)
		return
	}
	if cp.GroupConsumers[groupID] == nil {
		cp.GroupConsumers[groupID] = map[string]int64{}
	}
	cp.GroupConsumers[groupID][consumerID] = m.a.st.NextSeqLocked()
	answer := map[string]any{"consumer": store.DeepCopy(rec.Obj), "consumer_groups": consumerGroupsLocked(cp, consumerID)}
	if !m.fromConsumer {
		answer = map[string]any{"consumer_group": store.DeepCopy(rec.Obj), "consumers": groupConsumersLocked(cp, groupID)}
	}
	store.WriteJSON(w, http.StatusCreated, "application/json", answer)
}

// Remove removes one membership (the other side named in the path), or every one of the path's entity.
func (m *Membership) Remove(w http.ResponseWriter, r *http.Request, o *store.Org) {
	m.a.st.Lock()
	defer m.a.st.Unlock()
	cp, rec := m.selfLocked(w, r, o)
	if rec == nil {
		return
	}
	selfID := store.Str(rec.Obj["id"])
	_, other := m.sides()
	if r.PathValue(other.idVar) == "" {
		for _, groupID := range slices.Collect(maps.Keys(cp.GroupConsumers)) {
			if m.fromConsumer {
				delete(cp.GroupConsumers[groupID], selfID)
			} else if groupID == selfID {
				delete(cp.GroupConsumers, groupID)
			}
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	found := other.findLocked(cp, r.PathValue(other.idVar), "")
	if found == nil {
		writeCoreNotFound(w)
		return
	}
	groupID, consumerID := m.pair(selfID, store.Str(found.Obj["id"]))
	if _, ok := cp.GroupConsumers[groupID][consumerID]; !ok {
		writeCoreNotFound(w)
		return
	}
	delete(cp.GroupConsumers[groupID], consumerID)
	w.WriteHeader(http.StatusNoContent)
}
