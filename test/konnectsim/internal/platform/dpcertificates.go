package platform

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Data plane client certificates are the certificates a control plane trusts from its data planes (pinned client
// certificate mode). They are platform API objects, not core entities: answers wrap them ({"item": ...},
// {"items": [...]}), errors are the legacy {message} (KonnectCPLegacy* in the document), and they carry no tags. The certificate must be PEM that parses.

// dpCertificatesLocked returns the certificates of the request's control plane (nil when there is none). The
// handlers write their answers after unlocking.
func (a *API) dpCertificatesLocked(r *http.Request, o *store.Org) map[string]*store.Record {
	cp := o.ControlPlanes[r.PathValue("controlPlaneId")]
	if cp == nil {
		return nil
	}
	return cp.Entities[store.KindDPCertificate]
}

// notFound answers 404 for the request's control plane (cpFound false) or certificate.
func (a *API) notFound(w http.ResponseWriter, r *http.Request, cpFound bool) {
	if !cpFound {
		WriteLegacyError(w, http.StatusNotFound, fmt.Sprintf("control plane %s not found", r.PathValue("controlPlaneId")))
		return
	}
	WriteLegacyError(w, http.StatusNotFound, "certificate not found")
}

// readDPCertificate reads and checks a request body {cert, title}; ok false means a 400 was written.
func (a *API) readDPCertificate(w http.ResponseWriter, r *http.Request) (object, bool) {
	body, err := store.ReadObject(r)
	if err != nil {
		WriteLegacyError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return nil, false
	}
	cert, _ := body["cert"].(string)
	b, _ := pem.Decode([]byte(cert))
	if b == nil || b.Type != "CERTIFICATE" {
		WriteLegacyError(w, http.StatusBadRequest, "cert: must be a PEM-encoded certificate")
		return nil, false
	}
	if _, err := x509.ParseCertificate(b.Bytes); err != nil {
		WriteLegacyError(w, http.StatusBadRequest, "cert: failed to parse certificate")
		return nil, false
	}
	out := object{"cert": cert}
	if title, ok := body["title"].(string); ok {
		out["title"] = title
	}
	return out, true
}

// ListDPCertificates serves GET .../dp-client-certificates.
func (a *API) ListDPCertificates(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.st.Lock()
	recs := a.dpCertificatesLocked(r, o)
	items := []any{}
	for _, rec := range store.SortedRecords(recs) {
		items = append(items, store.DeepCopy(rec.Obj))
	}
	a.st.Unlock()
	if recs == nil {
		a.notFound(w, r, false)
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"items": items, "total_count": int64(len(items))})
}

// CreateDPCertificate serves POST .../dp-client-certificates.
func (a *API) CreateDPCertificate(w http.ResponseWriter, r *http.Request, o *store.Org) {
	obj, ok := a.readDPCertificate(w, r)
	if !ok {
		return
	}
	a.st.Lock()
	recs := a.dpCertificatesLocked(r, o)
	if recs != nil {
		now := a.st.Now().Unix()
		obj["id"], obj["created_at"], obj["updated_at"] = a.st.NewUUIDLocked(), now, now
		recs[store.Str(obj["id"])] = &store.Record{Seq: a.st.NextSeqLocked(), Obj: obj}
		obj = store.DeepCopy(obj).(object)
	}
	a.st.Unlock()
	if recs == nil {
		a.notFound(w, r, false)
		return
	}
	store.WriteJSON(w, http.StatusCreated, "application/json", map[string]any{"item": obj})
}

// GetDPCertificate serves GET .../dp-client-certificates/{certificateId}.
func (a *API) GetDPCertificate(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.st.Lock()
	recs := a.dpCertificatesLocked(r, o)
	var out any
	if rec := recs[r.PathValue("certificateId")]; rec != nil {
		out = store.DeepCopy(rec.Obj)
	}
	a.st.Unlock()
	if out == nil {
		a.notFound(w, r, recs != nil)
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"item": out})
}

// UpdateDPCertificate serves PUT .../dp-client-certificates/{certificateId}: the certificate is replaced.
func (a *API) UpdateDPCertificate(w http.ResponseWriter, r *http.Request, o *store.Org) {
	obj, ok := a.readDPCertificate(w, r)
	if !ok {
		return
	}
	a.st.Lock()
	recs := a.dpCertificatesLocked(r, o)
	rec := recs[r.PathValue("certificateId")]
	if rec != nil {
		obj["id"], obj["created_at"], obj["updated_at"] = rec.Obj["id"], rec.Obj["created_at"], a.st.Now().Unix()
		rec.Obj = obj
		obj = store.DeepCopy(obj).(object)
	}
	a.st.Unlock()
	if rec == nil {
		a.notFound(w, r, recs != nil)
		return
	}
	store.WriteJSON(w, http.StatusOK, "application/json", map[string]any{"item": obj})
}

// DeleteDPCertificate serves DELETE .../dp-client-certificates/{certificateId}.
func (a *API) DeleteDPCertificate(w http.ResponseWriter, r *http.Request, o *store.Org) {
	a.st.Lock()
	recs := a.dpCertificatesLocked(r, o)
	id := r.PathValue("certificateId")
	found := recs[id] != nil
	delete(recs, id)
	a.st.Unlock()
	if !found {
		a.notFound(w, r, recs != nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
