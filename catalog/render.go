package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
)

// DeclarativeConfig renders a catalog of the index as a File-Based Catalog: olm.package, olm.channel and
// olm.bundle documents (with olm.package, olm.gvk, olm.gvk.required and olm.bundle.object properties; CRDs as
// normalized to v1). Excluded bundles are left out. An empty catalog name renders the highest-priority catalog.
func (ix *Index) DeclarativeConfig(catalog string) (*declcfg.DeclarativeConfig, error) {
	if catalog == "" && len(ix.catalogs) > 0 {
		catalog = ix.catalogs[0].Name
	}
	cfg := &declcfg.DeclarativeConfig{}
	for _, name := range ix.PackageNames() {
		for _, p := range ix.packages[name] {
			if p.Catalog != catalog {
				continue
			}
			cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: p.Name, DefaultChannel: p.DefaultChannel})
			for _, ch := range p.Channels {
				c := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: p.Name, Name: ch.Name, Entries: []declcfg.ChannelEntry{}}
				// Oldest first, as people write them.
				for i := len(ch.Entries) - 1; i >= 0; i-- {
					e := ch.Entries[i]
					c.Entries = append(c.Entries, declcfg.ChannelEntry{Name: e.Bundle.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
				}
				cfg.Channels = append(cfg.Channels, c)
			}
			bundles := append([]*Bundle(nil), p.Bundles...)
			sort.SliceStable(bundles, func(i, j int) bool { return bundles[i].Version.LT(bundles[j].Version) })
			for _, b := range bundles {
				db, err := renderBundle(b)
				if err != nil {
					return nil, err
				}
				cfg.Bundles = append(cfg.Bundles, db)
			}
		}
	}
	return cfg, nil
}

func renderBundle(b *Bundle) (declcfg.Bundle, error) {
	db := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: b.Name, Package: b.Package}
	db.Properties = append(db.Properties, property.MustBuildPackage(b.Package, b.Version.String()))
	for _, g := range b.Provides {
		db.Properties = append(db.Properties, property.MustBuildGVK(g.Group, g.Version, g.Kind))
	}
	for _, g := range b.Requires {
		db.Properties = append(db.Properties, property.MustBuildGVKRequired(g.Group, g.Version, g.Kind))
	}
	objects := b.objects
	if b.manifests != nil {
		objects = nil
		add := func(v any) error {
			data, err := manifestJSON(v)
			if err != nil {
				return fmt.Errorf("bundle %s: %w", b.Name, err)
			}
			objects = append(objects, data)
			return nil
		}
		if err := add(b.manifests.CSV); err != nil {
			return db, err
		}
		for _, crd := range b.manifests.CRDs {
			if err := add(crd); err != nil {
				return db, err
			}
		}
		for _, o := range b.manifests.Objects {
			if err := add(o.Object); err != nil {
				return db, err
			}
		}
	}
	for _, o := range objects {
		db.Properties = append(db.Properties, property.MustBuildBundleObject(o))
	}
	return db, nil
}

// WriteFBC writes a DeclarativeConfig as JSON (format "json") or YAML ("yaml") with the operator-registry codec.
func WriteFBC(cfg *declcfg.DeclarativeConfig, format string, w io.Writer) error {
	switch strings.ToLower(format) {
	case "json", "":
		return declcfg.WriteJSON(*cfg, w)
	case "yaml", "yml":
		return declcfg.WriteYAML(*cfg, w)
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", format)
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
