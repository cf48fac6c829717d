package cloudgateways

import (
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Transit gateways of a network (/v2/cloud-gateways/networks/{networkId}/transit-gateways): created initializing,
// ready on the ReadsToReady-th GET, like networks. A network that is not ready takes none (400), as Konnect
// provisions the attachment in the network.

// networkLocked is the request's network, or nil after writing a 404.
func (a *API) networkLocked(w http.ResponseWriter, r *http.Request, o *store.Org) *network {
	n := a.orgLocked(o)[r.PathValue("networkId")]
	if n == nil {
		a.errs.WriteError(w, http.StatusNotFound)
	}
	return n
}

// CreateTransitGateway serves POST .../transit-gateways: the body (one of the document's CreateTransitGateway
// forms, checked already) with an ID, the state and the times.
func (a *API) CreateTransitGateway(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	n := a.networkLocked(w, r, o)
	if n == nil {
		a.mu.Unlock()
		return
	}
	if n.obj["state"] != "ready" {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	a.st.Lock()
	id, now := a.st.NewUUIDLocked(), store.FormatTime(a.st.Now())
	a.st.Unlock()
	obj := store.DeepCopy(body).(map[string]any)
	if _, ok := obj["dns_config"]; !ok {
		obj["dns_config"] = []any{}
	}
	obj["id"], obj["state"], obj["entity_version"], obj["created_at"], obj["updated_at"] = id, "initializing", int64(1), now, now
	n.tgs[id] = &network{obj: obj}
	out := store.DeepCopy(obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusCreated, "application/json", out)
}

// GetTransitGateway serves GET .../transit-gateways/{transitGatewayId}; a read advances its provisioning.
func (a *API) GetTransitGateway(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	n := a.networkLocked(w, r, o)
	if n == nil {
		a.mu.Unlock()
		return
	}
	tg := n.tgs[r.PathValue("transitGatewayId")]
	if tg == nil {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	if a.provisionedLocked(tg) {
		tg.obj["state"] = "ready"
	}
	out := store.DeepCopy(tg.obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// DeleteTransitGateway serves DELETE .../transit-gateways/{transitGatewayId}.
func (a *API) DeleteTransitGateway(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	n := a.networkLocked(w, r, o)
	if n == nil {
		a.mu.Unlock()
		return
	}
	id := r.PathValue("transitGatewayId")
	_, ok := n.tgs[id]
	delete(n.tgs, id)
	a.mu.Unlock()
	if !ok {
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TransitGatewayIDs returns the IDs of the transit gateways of every network of organization orgID.
func (a *API) TransitGatewayIDs(orgID string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := []string{}
	for _, n := range a.networks[orgID] {
		for id := range n.tgs {
			ids = append(ids, id)
		}
	}
	return ids
}
