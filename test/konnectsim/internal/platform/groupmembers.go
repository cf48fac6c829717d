package platform

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/almproject/alm/test/konnectsim/internal/coreentities"
	"github.com/almproject/alm/test/konnectsim/internal/store"
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

func clusterType(cp *store.ControlPlane) string {
	config, _ := cp.Obj["config"].(object)
	return store.Str(config["cluster_type"])
}

// groupLocked returns the request's group, or the status and message of why it cannot be one.
func groupLocked(r *http.Request, o *store.Org) (*store.ControlPlane, int, string) {
	id := r.PathValue("controlPlaneId")
	cp := o.ControlPlanes[id]
	switch {
	case cp == nil:
		return nil, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id)
	case clusterType(cp) != groupClusterType:
		return nil, http.StatusBadRequest, fmt.Sprintf("control plane %s is not a control plane group (cluster_type %s)", id, clusterType(cp))
	}
	return cp, 0, ""
}

// writeGroupProblem answers groupLocked's refusal. A 400 (not a group) names the path's control plane as the invalid
// parameter: Konnect's BadRequestError always lists at least one.
func (a *API) writeGroupProblem(w http.ResponseWriter, status int, msg string) {
	if status != http.StatusBadRequest {
		a.writeProblem(w, status, msg)
		return
	}
	a.writeProblem(w, status, "Invalid Parameters", invalidParameter{Field: "controlPlaneId", Rule: "invalid", Source: "path", Reason: msg})
}

// ListGroupMembers serves GET .../group-memberships: the members as control planes, in cursor pages.
func (a *API) ListGroupMembers(w http.ResponseWriter, r *http.Request, o *store.Org) {
	q := r.URL.Query()
	size := defaultPageSize
	if v := q.Get("page[size]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", invalidParameter{Field: "page[size]", Rule: "invalid", Source: "query", Reason: fmt.Sprintf("must be an integer between 1 and %d", maxPageSize)})
			return
		}
		size = n
	}
	start := 0
	if v := q.Get("page[after]"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", invalidParameter{Field: "page[after]", Rule: "invalid", Source: "query", Reason: "invalid cursor"})
			return
		}
		start = n
	}
	a.st.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		a.st.Unlock()
		a.writeGroupProblem(w, status, msg)
		return
	}
	total := len(group.Members)
	data := []any{}
	for i := start; i < total && i < start+size; i++ {
		if m := o.ControlPlanes[group.Members[i]]; m != nil {
			data = append(data, store.DeepCopy(m.Obj))
		}
	}
	a.st.Unlock()
	page := map[string]any{"size": size, "total": total, "next": nil}
	if start+size < total {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(start + size)))
		page["next"] = r.URL.Path + "?page%5Bafter%5D=" + cursor + "&page%5Bsize%5D=" + strconv.Itoa(size)
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"data": data, "meta": map[string]any{"page": page}})
}

// memberIDsLocked reads {"members":[{"id"}]} and checks every member against o, as Konnect does.
func memberIDsLocked(r *http.Request, o *store.Org) ([]string, []invalidParameter, error) {
	body, err := store.ReadObject(r)
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
		id := store.Str(m["id"])
		field := fmt.Sprintf("members[%d].id", i)
		switch cp := o.ControlPlanes[id]; {
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
func (a *API) changeMembers(w http.ResponseWriter, r *http.Request, o *store.Org, change func(current, listed []string) []string) {
	a.st.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		a.st.Unlock()
		a.writeGroupProblem(w, status, msg)
		return
	}
	ids, bad, err := memberIDsLocked(r, o)
	if err == nil && len(bad) == 0 {
		group.Members = change(group.Members, ids)
		a.st.TouchLocked(store.KindControlPlane, group.Obj)
	}
	a.st.Unlock()
	switch {
	case err != nil:
		a.writeProblem(w, http.StatusBadRequest, "Invalid request body", invalidParameter{Field: "body", Rule: "invalid", Source: "body", Reason: err.Error()})
	case len(bad) > 0:
		a.writeProblem(w, http.StatusBadRequest, "Invalid Parameters", bad...)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// PutGroupMembers serves PUT .../group-memberships: the listed members replace the group's.
func (a *API) PutGroupMembers(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.changeMembers(w, r, o, func(_, listed []string) []string { return listed })
}

// AddGroupMembers serves POST .../group-memberships/add.
func (a *API) AddGroupMembers(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.changeMembers(w, r, o, func(current, listed []string) []string {
		for _, id := range listed {
			if !slices.Contains(current, id) {
				current = append(current, id)
			}
		}
		return current
	})
}

// RemoveGroupMembers serves POST .../group-memberships/remove.
func (a *API) RemoveGroupMembers(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.changeMembers(w, r, o, func(current, listed []string) []string {
		return slices.DeleteFunc(current, func(id string) bool { return slices.Contains(listed, id) })
	})
}

// GroupMemberStatus serves GET .../group-member-status: whether a control plane is a member of a group.
func (a *API) GroupMemberStatus(w http.ResponseWriter, r *http.Request, o *store.Org) {
	id := r.PathValue("controlPlaneId")
	a.st.Lock()
	_, found := o.ControlPlanes[id]
	member := false
	for _, cp := range o.ControlPlanes {
		member = member || slices.Contains(cp.Members, id)
	}
	a.st.Unlock()
	if !found {
		a.writeProblem(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", id))
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"is_member": member})
}

// GroupStatus reports the conflicts Konnect finds when it merges the members'
// configurations: an entity whose id or unique name (service name, consumer
// username, credential key...) an earlier member already has.
func (a *API) GroupStatus(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.st.Lock()
	group, status, msg := groupLocked(r, o)
	if group == nil {
		a.st.Unlock()
		a.writeGroupProblem(w, status, msg)
		return
	}
	conflicts := []any{}
	seen := map[string]bool{}
	for _, memberID := range group.Members {
		member := o.ControlPlanes[memberID]
		if member == nil {
			continue
		}
		for _, kind := range store.CoreKinds {
			for _, rec := range store.SortedRecords(member.Entities[kind]) {
				id := store.Str(rec.Obj["id"])
				keys := []string{string(kind) + " id " + id}
				for _, field := range coreentities.UniqueFields(kind) {
					if v := store.Str(rec.Obj[field]); v != "" {
						keys = append(keys, string(kind)+" "+field+" "+v)
					}
				}
				if slices.ContainsFunc(keys, func(k string) bool { return seen[k] }) {
					conflicts = append(conflicts, map[string]any{
						"cluster_id":  memberID,
						"description": fmt.Sprintf("conflicting entity found: ID=%s, Name=%s", id, store.DisplayName(kind, rec.Obj)),
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
		"id":         group.Obj["id"],
		"created_at": group.Obj["created_at"],
		"updated_at": group.Obj["updated_at"],
		"state":      state,
		"conflicts":  conflicts,
	}
	a.st.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"item": item})
}
