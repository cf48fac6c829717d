package konnectsim

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// Control plane groups: a control plane of cluster_type
// CLUSTER_TYPE_CONTROL_PLANE_GROUP has members, other control planes of the
// same organization that are not groups themselves.
//   - GET    .../group-memberships          members as control planes, cursor pages:
//     page[size] (default 10, at most 100), page[after]; meta.page {next, size, total}
//   - PUT    .../group-memberships          {"members":[{"id"}]} replaces the list (204)
//   - POST   .../group-memberships/add      adds the listed members (204)
//   - POST   .../group-memberships/remove   removes the listed members (204)
//   - GET    .../group-member-status        {"is_member": bool} for any control plane
//   - GET    .../group-status                {"item": {id, created_at, updated_at, state, conflicts}}:
//     state CONFLICT when members hold entities of one kind with the same id or unique name
// A group that does not exist is 404; a control plane that is not a group, an
// unknown member or a member that is a group is 400. Deleting a control plane
// takes it out of every group.

const groupClusterType = "CLUSTER_TYPE_CONTROL_PLANE_GROUP"

func clusterType(cp *controlPlane) string {
	config, _ := cp.obj["config"].(object)
	return str(config["cluster_type"])
}

// groupLocked returns the request's group, or the status and message of why it cannot be one.
func groupLocked(r *http.Request, o *org) (*controlPlane, int, string) {
	id := r.PathValue("controlPlaneId")
	cp := o.controlPlanes[id]
	switch {
	case cp == nil:
		return nil, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id)
	case clusterType(cp) != groupClusterType:
		return nil, http.StatusBadRequest, fmt.Sprintf("control plane %s is not a control plane group (cluster_type %s)", id, clusterType(cp))
	}
	return cp, 0, ""
}

func (s *Server) listGroupMembers(w http.ResponseWriter, r *http.Request, o *org) {
	q := r.URL.Query()
	size := defaultPageSize
	if v := q.Get("page[size]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			s.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", invalidParameter{Field: "page[size]", Rule: "invalid", Source: "query", Reason: fmt.Sprintf("must be an integer between 1 and %d", maxPageSize)})
			return
		}
		size = n
	}
	start := 0
	if v := q.Get("page[after]"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			s.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", invalidParameter{Field: "page[after]", Rule: "invalid", Source: "query", Reason: "invalid cursor"})
			return
		}
		start = n
	}
	s.mu.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		s.mu.Unlock()
		s.writeProblem(w, status, msg)
		return
	}
	total := len(group.members)
	data := []any{}
	for i := start; i < total && i < start+size; i++ {
		if m := o.controlPlanes[group.members[i]]; m != nil {
			data = append(data, deepCopy(m.obj))
		}
	}
	s.mu.Unlock()
	page := map[string]any{"size": size, "total": total, "next": nil}
	if start+size < total {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(start + size)))
		page["next"] = r.URL.Path + "?page%5Bafter%5D=" + cursor + "&page%5Bsize%5D=" + strconv.Itoa(size)
	}
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"data": data, "meta": map[string]any{"page": page}})
}

// memberIDs reads {"members":[{"id"}]} and checks every member against o, as Konnect does.
func (s *Server) memberIDsLocked(r *http.Request, o *org) ([]string, []invalidParameter, error) {
	body, err := readObject(r)
	if err != nil {
		return nil, nil, err
	}
	list, ok := body["members"].([]any)
	if !ok {
		return nil, []invalidParameter{{Field: "members", Rule: "required", Source: "body", Reason: "is a required array"}}, nil
	}
	var ids []string
	var bad []invalidParameter
	for i, item := range list {
		m, _ := item.(map[string]any)
		id := str(m["id"])
		field := fmt.Sprintf("members[%d].id", i)
		switch cp := o.controlPlanes[id]; {
		case cp == nil:
			bad = append(bad, invalidParameter{Field: field, Rule: "invalid", Source: "body", Reason: fmt.Sprintf("control plane %s not found", id)})
		case clusterType(cp) == groupClusterType:
			bad = append(bad, invalidParameter{Field: field, Rule: "invalid", Source: "body", Reason: fmt.Sprintf("control plane %s is a control plane group, which cannot be a member of a group", id)})
		case !slices.Contains(ids, id):
			ids = append(ids, id)
		}
	}
	return ids, bad, nil
}

// changeMembers serves PUT, add and remove: change computes the new list from the current one and the request's.
func (s *Server) changeMembers(w http.ResponseWriter, r *http.Request, o *org, change func(current, listed []string) []string) {
	s.mu.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		s.mu.Unlock()
		s.writeProblem(w, status, msg)
		return
	}
	ids, bad, err := s.memberIDsLocked(r, o)
	if err == nil && len(bad) == 0 {
		group.members = change(group.members, ids)
		s.touchLocked(KindControlPlane, group.obj)
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		s.writeProblem(w, http.StatusBadRequest, "Invalid request body", invalidParameter{Field: "body", Rule: "invalid", Source: "body", Reason: err.Error()})
	case len(bad) > 0:
		s.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", bad...)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) putGroupMembers(w http.ResponseWriter, r *http.Request, o *org) {
	s.changeMembers(w, r, o, func(_, listed []string) []string { return listed })
}

func (s *Server) addGroupMembers(w http.ResponseWriter, r *http.Request, o *org) {
	s.changeMembers(w, r, o, func(current, listed []string) []string {
		for _, id := range listed {
			if !slices.Contains(current, id) {
				current = append(current, id)
			}
		}
		return current
	})
}

func (s *Server) removeGroupMembers(w http.ResponseWriter, r *http.Request, o *org) {
	s.changeMembers(w, r, o, func(current, listed []string) []string {
		return slices.DeleteFunc(current, func(id string) bool { return slices.Contains(listed, id) })
	})
}

func (s *Server) groupMemberStatus(w http.ResponseWriter, r *http.Request, o *org) {
	id := r.PathValue("controlPlaneId")
	s.mu.Lock()
	_, found := o.controlPlanes[id]
	member := false
	for _, cp := range o.controlPlanes {
		member = member || slices.Contains(cp.members, id)
	}
	s.mu.Unlock()
	if !found {
		s.writeProblem(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id))
		return
	}
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"is_member": member})
}

// groupStatus reports the conflicts Konnect finds when it merges the members'
// configurations: an entity whose id or unique name (service name, consumer
// username, credential key...) an earlier member already has.
func (s *Server) groupStatus(w http.ResponseWriter, r *http.Request, o *org) {
	s.mu.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		s.mu.Unlock()
		s.writeProblem(w, status, msg)
		return
	}
	conflicts := []any{}
	seen := map[string]bool{}
	for _, memberID := range group.members {
		member := o.controlPlanes[memberID]
		if member == nil {
			continue
		}
		for _, kind := range coreKinds {
			for _, rec := range sortedRecords(member.entities[kind]) {
				id := str(rec.obj["id"])
				keys := []string{string(kind) + " id " + id}
				for _, field := range coreSpecs[kind].unique {
					if v := str(rec.obj[field]); v != "" {
						keys = append(keys, string(kind)+" "+field+" "+v)
					}
				}
				if slices.ContainsFunc(keys, func(k string) bool { return seen[k] }) {
					conflicts = append(conflicts, map[string]any{
						"cluster_id":  memberID,
						"description": fmt.Sprintf("conflicting entity found: ID=%s, Name=%s", id, displayName(kind, rec.obj)),
						"resource":    map[string]any{"id": id, "type": string(kind)},
					})
				}
				for _, k := range keys {
					seen[k] = true
				}
			}
		}
	}
	state := "OK"
	if len(conflicts) > 0 {
		state = "CONFLICT"
	}
	item := map[string]any{
		"id":         group.obj["id"],
		"created_at": group.obj["created_at"],
		"updated_at": group.obj["updated_at"],
		"state":      state,
		"conflicts":  conflicts,
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"item": item})
}

// GroupMembers returns the member IDs of the control plane group groupID (nil if there is no such group).
func (s *Server) GroupMembers(groupID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orgs {
		if cp := o.controlPlanes[groupID]; cp != nil {
			return slices.Clone(cp.members)
		}
	}
	return nil
}
