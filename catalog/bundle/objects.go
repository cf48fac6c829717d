package bundle

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectsJSON is every object of the bundle as JSON, as a File-Based Catalog's olm.bundle.object properties hold
// them: the CSV first, then the CRDs (normalized to v1) and the other objects; nil when the source holds only the
// bundle's metadata. A bundle loaded for rendering (LoadForRender) reads its files again and refuses one that
// changed since the load.
func (b *Bundle) ObjectsJSON() ([][]byte, error) {
	switch {
	case b.plan != nil:
		return b.plannedObjects()
	case b.manifests != nil || b.source != nil:
		m, err := b.Manifests()
		if err != nil {
			return nil, err
		}
		objects, err := m.objectsJSON()
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.Name, err)
		}
		return objects, nil
	}
	return b.objects, nil
}

// objectsJSON is every object of the bundle as JSON, the CSV first, then the CRDs and the other objects: the JSON
// they were read from when normalization left them unchanged, else re-encoded.
func (m *Manifests) objectsJSON() ([][]byte, error) {
	all := m.ordered()
	out := make([][]byte, 0, len(all))
	for _, v := range all {
		data, err := m.objectJSON(v)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// ordered is the CSV, the CRDs and the other objects.
func (m *Manifests) ordered() []any {
	all := []any{m.CSV}
	for _, crd := range m.CRDs {
		all = append(all, crd)
	}
	for _, o := range m.Objects {
		all = append(all, o)
	}
	return all
}

// objectJSON is one object of m as rendered: the JSON it was read from, or re-encoded.
func (m *Manifests) objectJSON(v any) ([]byte, error) {
	if raw := m.raw[v]; raw != nil {
		return raw, nil
	}
	if u, ok := v.(*unstructured.Unstructured); ok {
		v = u.Object
	}
	return manifestJSON(v)
}

// manifestJSON is an object as it is written in a bundle: JSON without status and without empty creationTimestamp.
func manifestJSON(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
		delete(meta, "creationTimestamp")
	}
	return json.Marshal(m)
}
