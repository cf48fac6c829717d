// Package cloudgateways serves the Dedicated Cloud Gateway networks of Konnect's cloud gateways API
// (/v2/cloud-gateways/networks). Konnect provisions a network in the cloud provider, which takes minutes: a new
// network is "initializing" and becomes "ready", or stays "offline" with state_metadata saying why, the states of
// the document's NetworkState. Here the state advances on reads, not on a clock, so tests are deterministic: a
// network is ready on its ReadsToReady-th GET, or failed then if FailNetwork named it.
package cloudgateways

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// DefaultReadsToReady is how many GETs of an initializing network see it initializing before it is ready.
const DefaultReadsToReady = 2

// Errors answers an error as the platform APIs do (application/problem+json).
type Errors interface {
	WriteError(w http.ResponseWriter, status int)
}

// API serves the cloud gateway networks of every organization.
type API struct {
	st   *store.Store
	errs Errors

	mu           sync.Mutex
	readsToReady int
	failures     map[string]string // network name -> reason its provisioning fails with
	networks     map[string]map[string]*network
	configs      map[string]map[string]*network // organization -> control plane ID -> configuration
}

// network is a stored network and how often it was read while initializing, and its transit gateways.
type network struct {
	obj   map[string]any
	reads int
	tgs   map[string]*network
}

// New returns the cloud gateways API over st.
func New(st *store.Store, errs Errors) *API {
	return &API{st: st, errs: errs, readsToReady: DefaultReadsToReady, failures: map[string]string{}, networks: map[string]map[string]*network{},
		configs: map[string]map[string]*network{}}
}

// SetReadsToReady sets how many GETs see a new network initializing (< 1: ready at the first GET).
func (a *API) SetReadsToReady(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.readsToReady = n
}

// FailNetwork makes the provisioning of networks named name fail with reason: where it would become ready, the
// network goes offline with state_metadata {reported_status: INVALID, reason}.
func (a *API) FailNetwork(name, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failures[name] = reason
}

func (a *API) orgLocked(o *store.Org) map[string]*network {
	m := a.networks[o.ID]
	if m == nil {
		m = map[string]*network{}
		a.networks[o.ID] = m
	}
	return m
}

// CreateNetwork serves POST /v2/cloud-gateways/networks (the request is checked against the document already).
func (a *API) CreateNetwork(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	nets := a.orgLocked(o)
	for _, n := range nets {
		if n.obj["name"] == body["name"] {
			a.mu.Unlock()
			a.errs.WriteError(w, http.StatusConflict)
			return
		}
	}
	a.st.Lock()
	id, now := a.st.NewUUIDLocked(), store.FormatTime(a.st.Now())
	a.st.Unlock()
	state, _ := body["state"].(string)
	if state == "" {
		state = "initializing"
	}
	obj := map[string]any{
		"id": id, "name": body["name"], "default": false,
		"cloud_gateway_provider_account_id": body["cloud_gateway_provider_account_id"],
		"region":                            body["region"], "availability_zones": body["availability_zones"], "cidr_block": body["cidr_block"],
		"provider_metadata": map[string]any{}, "state": state, "transit_gateway_count": int64(0),
		"configuration_reference_count": int64(0), "entity_version": int64(1), "created_at": now, "updated_at": now,
	}
	nets[id] = &network{obj: obj, tgs: map[string]*network{}}
	out := store.DeepCopy(obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusCreated, "application/json", out)
}

// GetNetwork serves GET /v2/cloud-gateways/networks/{networkId}: each read of an initializing network advances
// its provisioning.
func (a *API) GetNetwork(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	n := a.orgLocked(o)[r.PathValue("networkId")]
	if n == nil {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	a.advanceLocked(n)
	n.obj["transit_gateway_count"] = int64(len(n.tgs))
	out := store.DeepCopy(n.obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// advanceLocked counts a read of an initializing network and ends its provisioning on the readsToReady-th.
func (a *API) advanceLocked(n *network) {
	if !a.provisionedLocked(n) {
		return
	}
	if reason, failed := a.failures[fmt.Sprint(n.obj["name"])]; failed {
		n.obj["state"] = "offline"
		n.obj["state_metadata"] = map[string]any{"reported_status": "INVALID", "reason": reason}
		return
	}
	n.obj["state"] = "ready"
}

// provisionedLocked counts a read of an initializing entity and says whether it ends its provisioning.
func (a *API) provisionedLocked(n *network) bool {
	if n.obj["state"] != "initializing" {
		return false
	}
	n.reads++
	if n.reads < a.readsToReady {
		return false
	}
	n.obj["entity_version"] = n.obj["entity_version"].(int64) + 1
	return true
}

// DeleteNetwork serves DELETE /v2/cloud-gateways/networks/{networkId}. (Konnect answers the delete and goes
// through terminating; the simulator removes the network at once.)
func (a *API) DeleteNetwork(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	nets := a.orgLocked(o)
	id := r.PathValue("networkId")
	_, ok := nets[id]
	delete(nets, id)
	a.mu.Unlock()
	if !ok {
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// NetworkIDs returns the IDs of the networks of organization orgID.
func (a *API) NetworkIDs(orgID string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := []string{}
	for id := range a.networks[orgID] {
		ids = append(ids, id)
	}
	return ids
}
