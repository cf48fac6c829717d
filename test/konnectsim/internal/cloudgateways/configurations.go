package cloudgateways

import (
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Data plane group configurations (/v2/cloud-gateways/configurations): one per control plane. PUT replaces it
// (Konnect then reconciles the data plane groups to it); its groups start initializing and are ready on the
// ReadsToReady-th GET. There is no DELETE: an empty configuration (no groups) stands for none.

// PutConfiguration serves PUT /v2/cloud-gateways/configurations.
func (a *API) PutConfiguration(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	cpID := store.Str(body["control_plane_id"])
	a.st.Lock()
	_, cpFound := o.ControlPlanes[cpID]
	id, now := a.st.NewUUIDLocked(), store.FormatTime(a.st.Now())
	a.st.Unlock()
	if !cpFound {
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	a.mu.Lock()
	byCP := a.configs[o.ID]
	if byCP == nil {
		byCP = map[string]*network{}
		a.configs[o.ID] = byCP
	}
	c := byCP[cpID]
	version := int64(1)
	if c != nil {
		id, version = store.Str(c.obj["id"]), c.obj["entity_version"].(int64)+1
	}
	groups, configs := []any{}, []any{}
	for _, g := range asList(body["dataplane_groups"]) {
		a.st.Lock()
		gid := a.st.NewUUIDLocked()
		a.st.Unlock()
		group := store.DeepCopy(g).(map[string]any)
		configs = append(configs, store.DeepCopy(g))
		group["id"], group["state"], group["created_at"], group["updated_at"] = gid, "initializing", now, now
		groups = append(groups, group)
	}
	obj := map[string]any{
		"id": id, "control_plane_id": cpID, "control_plane_geo": body["control_plane_geo"], "dataplane_group_config": configs,
		"dataplane_groups": groups, "entity_version": version, "created_at": now, "updated_at": now,
	}
	for _, k := range []string{"version", "api_access", "kind"} {
		if v, ok := body[k]; ok {
			obj[k] = v
		}
	}
	byCP[cpID] = &network{obj: obj}
	out := store.DeepCopy(obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// GetConfiguration serves GET /v2/cloud-gateways/configurations/{configurationId}; a read advances the
// provisioning of its data plane groups.
func (a *API) GetConfiguration(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	var c *network
	for _, cfg := range a.configs[o.ID] {
		if cfg.obj["id"] == r.PathValue("configurationId") {
			c = cfg
		}
	}
	if c == nil {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	c.reads++
	if c.reads >= a.readsToReady {
		for _, g := range asList(c.obj["dataplane_groups"]) {
			g.(map[string]any)["state"] = "ready"
		}
	}
	out := store.DeepCopy(c.obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// DataPlaneGroups returns how many data plane groups the configuration of control plane cpID has (-1: none).
func (a *API) DataPlaneGroups(orgID, cpID string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.configs[orgID][cpID]
	if c == nil {
		return -1
	}
	return len(asList(c.obj["dataplane_groups"]))
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
