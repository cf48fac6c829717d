package cloudgateways

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// List and update operations of networks and transit gateways (list-networks, update-network,
// list-transit-gateways, update-transit-gateway). Lists take the document's filter[name] and filter[state] (with
// eq, neq, oeq, contains) and page-number pagination (page[size] 1..100, default 10; page[number] from 1), answered
// oldest first. Konnect's update-network changes only the name (PatchNetworkRequest), and update-transit-gateway
// only an AWS transit gateway's cidr_blocks (PatchAwsTransitGateway; an Azure one takes no update: 400).

const maxPageSize = 100

// writePage answers the page of entities (oldest first) that match the request's filters.
func (a *API) writePage(w http.ResponseWriter, r *http.Request, entities map[string]*network) {
	q := r.URL.Query()
	size, number := 10, 1
	if v := q.Get("page[size]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			a.errs.WriteError(w, http.StatusBadRequest)
			return
		}
		size = n
	}
	if v := q.Get("page[number]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			a.errs.WriteError(w, http.StatusBadRequest)
			return
		}
		number = n
	}
	a.mu.Lock()
	matching := []map[string]any{}
	for _, e := range entities {
		if matches(e.obj, q) {
			matching = append(matching, store.DeepCopy(e.obj).(map[string]any))
		}
	}
	a.mu.Unlock()
	sort.Slice(matching, func(i, j int) bool {
		ti, tj := store.Str(matching[i]["created_at"]), store.Str(matching[j]["created_at"])
		return ti < tj || ti == tj && store.Str(matching[i]["id"]) < store.Str(matching[j]["id"])
	})
	data := []any{}
	if start := (number - 1) * size; start < len(matching) {
		for _, m := range matching[start:min(start+size, len(matching))] {
			data = append(data, m)
		}
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{
		"meta": map[string]any{"page": map[string]any{"number": number, "size": size, "total": len(matching)}},
		"data": data,
	})
}

// matches applies filter[name] and filter[state] (filter[field] or filter[field][op]).
func matches(obj map[string]any, q map[string][]string) bool {
	return store.MatchFilters(map[string]string{"name": store.Str(obj["name"]), "state": store.Str(obj["state"])}, q)
}

// ListNetworks serves GET /v2/cloud-gateways/networks.
func (a *API) ListNetworks(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	nets := a.orgLocked(o)
	for _, n := range nets {
		n.obj["transit_gateway_count"] = int64(len(n.tgs))
	}
	a.mu.Unlock()
	a.writePage(w, r, nets)
}

// UpdateNetwork serves PATCH /v2/cloud-gateways/networks/{networkId}: a new name (409 if another network of the
// organization has it).
func (a *API) UpdateNetwork(w http.ResponseWriter, r *http.Request, o *store.Org) {
	body, err := store.ReadObject(r)
	if err != nil {
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	nets := a.orgLocked(o)
	id := r.PathValue("networkId")
	n := nets[id]
	if n == nil {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	if name, ok := body["name"]; ok && name != n.obj["name"] {
		for otherID, other := range nets {
			if otherID != id && other.obj["name"] == name {
				a.mu.Unlock()
				a.errs.WriteError(w, http.StatusConflict)
				return
			}
		}
		a.touchLocked(n)
		n.obj["name"] = name
	}
	n.obj["transit_gateway_count"] = int64(len(n.tgs))
	out := store.DeepCopy(n.obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

func (a *API) touchLocked(n *network) {
	a.st.Lock()
	n.obj["updated_at"] = store.FormatTime(a.st.Now())
	a.st.Unlock()
	n.obj["entity_version"] = n.obj["entity_version"].(int64) + 1
}

// ListTransitGateways serves GET .../transit-gateways.
func (a *API) ListTransitGateways(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.mu.Lock()
	n := a.networkLocked(w, r, o)
	a.mu.Unlock()
	if n != nil {
		a.writePage(w, r, n.tgs)
	}
}

// UpdateTransitGateway serves PATCH .../transit-gateways/{transitGatewayId}: new cidr_blocks of an AWS transit
// gateway.
func (a *API) UpdateTransitGateway(w http.ResponseWriter, r *http.Request, o *store.Org) {
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
	tg := n.tgs[r.PathValue("transitGatewayId")]
	if tg == nil {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusNotFound)
		return
	}
	cidrs, ok := body["cidr_blocks"]
	if _, aws := tg.obj["cidr_blocks"]; !ok || !aws {
		a.mu.Unlock()
		a.errs.WriteError(w, http.StatusBadRequest)
		return
	}
	a.touchLocked(tg)
	tg.obj["cidr_blocks"] = store.DeepCopy(cidrs)
	out := store.DeepCopy(tg.obj)
	a.mu.Unlock()
	store.WriteJSON(w, http.StatusOK, "application/json", out)
}

// Entity returns a copy of the network or transit gateway id of organization orgID (nil: none).
func (a *API) Entity(orgID, id string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.entityLocked(orgID, id); e != nil {
		return store.DeepCopy(e.obj).(map[string]any)
	}
	return nil
}

// Edit sets fields of the network or transit gateway id, as an edit made in Konnect (false: no such entity).
func (a *API) Edit(orgID, id string, fields map[string]any) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.entityLocked(orgID, id)
	if e == nil {
		return false
	}
	a.touchLocked(e)
	for k, v := range fields {
		e.obj[k] = store.DeepCopy(v)
	}
	return true
}

func (a *API) entityLocked(orgID, id string) *network {
	for nid, n := range a.networks[orgID] {
		if nid == id {
			return n
		}
		if tg := n.tgs[id]; tg != nil {
			return tg
		}
	}
	return nil
}
