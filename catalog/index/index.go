// Package index is the catalog's index and resolver: per catalog, package -> channels -> entries, the upgrade
// graph with the one upgrade rule (Upgrade.EdgeFrom), GVK -> owning bundles, and Resolve, a deterministic filter
// pipeline whose every rejected candidate has a reason. It also summarizes a catalog for its CatalogSource status
// (Status), draws the upgrade graph (WriteMermaid) and renders a catalog as a File-Based Catalog.
package index

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/deprecation"
	"github.com/almproject/alm/catalog/fbc"
)

// Catalog is one source of bundles handed to New.
type Catalog struct {
	// Name identifies the catalog in results (e.g. the CatalogSource's namespace/name).
	Name string
	// Priority orders catalogs offering the same version: higher wins.
	Priority int
	// Contents is what was loaded from the catalog (fbc.LoadDir, fbc.Load, configmap.Load). The index takes it over.
	Contents *fbc.Contents
}

// Index is a ready-to-resolve view of one or more catalogs: package -> channels -> entries, the upgrade graph and
// GVK -> owning bundles. It is immutable once built and safe for concurrent use.
type Index struct {
	catalogs []*Catalog                                   // by priority, highest first, then name
	packages map[string][]*Package                        // package name -> one per catalog, in catalog order
	owners   map[schema.GroupVersionKind][]*bundle.Bundle // provided kind -> bundles, catalog order then version desc
	problems []bundle.Problem
}

// Package is one package in one catalog.
type Package struct {
	Name     string
	Catalog  string
	Priority int
	// DefaultChannel is the channel used when a request names none.
	DefaultChannel string
	// Channels sorted by name.
	Channels []*Channel
	// Bundles are every bundle of the package that was not excluded, highest version first.
	Bundles []*bundle.Bundle
	// Rejected are the errors that excluded bundles of this package.
	Rejected []bundle.Problem
	// Deprecations are what the catalog deprecates of the package (olm.deprecations); nil: nothing.
	Deprecations *deprecation.Set
}

// Channel is an ordered list of entries, highest version first.
type Channel struct {
	Name    string
	Entries []*Entry
}

// Entry is a bundle's place in a channel with its upgrade edges.
type Entry struct {
	Bundle *bundle.Bundle
	// Replaces names the bundle this one upgrades from.
	Replaces string
	// Skips name bundles this one may also upgrade from directly.
	Skips []string
	// SkipRange is a semver range of versions this one may upgrade from directly.
	SkipRange string

	skipRange semver.Range
	path      string
}

// Channel returns the named channel, or nil.
func (p *Package) Channel(name string) *Channel {
	i := sort.Search(len(p.Channels), func(i int) bool { return p.Channels[i].Name >= name })
	if i < len(p.Channels) && p.Channels[i].Name == name {
		return p.Channels[i]
	}
	return nil
}

// ChannelNames returns the names of the package's channels, sorted.
func (p *Package) ChannelNames() []string {
	out := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = c.Name
	}
	return out
}

// Entry returns the channel's entry for the bundle name, or nil.
func (c *Channel) Entry(name string) *Entry {
	for _, e := range c.Entries {
		if e.Bundle.Name == name {
			return e
		}
	}
	return nil
}

// Head is the channel's highest version, or nil for an empty channel.
func (c *Channel) Head() *Entry {
	if len(c.Entries) == 0 {
		return nil
	}
	return c.Entries[0]
}

// UpgradesFrom reports whether e may be installed over the bundle name at version v by the upgrade rule
// (Upgrade.EdgeFrom): e is newer than v and replaces it, skips it, or its skipRange includes v.
func (e *Entry) UpgradesFrom(name string, v semver.Version) bool {
	return e.upgrade().EdgeFrom(name, v) != ""
}

// New indexes catalogs. It never fails: bad bundles, documents and graph edges become Problems (Problems()),
// errors exclude only the bundles they are about, and everything else is indexed.
func New(catalogs ...Catalog) *Index {
	ix := &Index{packages: map[string][]*Package{}, owners: map[schema.GroupVersionKind][]*bundle.Bundle{}}
	for i := range catalogs {
		c := catalogs[i]
		if c.Contents == nil {
			c.Contents = &fbc.Contents{}
		}
		ix.catalogs = append(ix.catalogs, &c)
	}
	sort.SliceStable(ix.catalogs, func(i, j int) bool {
		a, b := ix.catalogs[i], ix.catalogs[j]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		return a.Name < b.Name
	})
	for _, c := range ix.catalogs {
		pkgs, problems := buildCatalog(c)
		c.Contents = nil // everything needed is in the packages now; let the documents go
		for i := range problems {
			problems[i].Catalog = c.Name
		}
		ix.problems = append(ix.problems, problems...)
		for _, p := range pkgs {
			ix.packages[p.Name] = append(ix.packages[p.Name], p)
			for _, b := range p.Bundles {
				for _, gvk := range b.Provides {
					ix.owners[gvk] = append(ix.owners[gvk], b)
				}
			}
		}
	}
	sortProblems(ix.problems)
	return ix
}

// replacesCycle returns the entries that lie on a replaces cycle, following replaces within the channel.
func replacesCycle(entries []*Entry, excluded map[*bundle.Bundle]bool) []*Entry {
	byName := make(map[string]*Entry, len(entries))
	for _, e := range entries {
		if !excluded[e.Bundle] {
			byName[e.Bundle.Name] = e
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*Entry]int, len(byName))
	var cycle []*Entry
	for _, start := range entries {
		if excluded[start.Bundle] || state[start] != unseen {
			continue
		}
		var path []*Entry
		for e := start; e != nil && state[e] == unseen; e = byName[e.Replaces] {
			state[e] = onPath
			path = append(path, e)
			if next := byName[e.Replaces]; next != nil && state[next] == onPath {
				for i := len(path) - 1; i >= 0; i-- {
					cycle = append(cycle, path[i])
					if path[i] == next {
						break
					}
				}
			}
		}
		for _, e := range path {
			state[e] = done
		}
	}
	sort.Slice(cycle, func(i, j int) bool { return cycle[i].Bundle.Name < cycle[j].Bundle.Name })
	return cycle
}

func sortEntries(es []*Entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Bundle.Version.GT(es[j].Bundle.Version) })
}

func sortedChanKeys(m map[chanKey][]*Entry) []chanKey {
	keys := make([]chanKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pkg != keys[j].pkg {
			return keys[i].pkg < keys[j].pkg
		}
		return keys[i].ch < keys[j].ch
	})
	return keys
}

func isRejected(p *Package, bundle string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Rejected {
		if r.Bundle == bundle {
			return true
		}
	}
	return false
}

func bundleErr(b *bundle.Bundle, rule, hint, format string, args ...any) bundle.Problem {
	return bundleErrAt(b.Path, b, rule, hint, format, args...)
}

func bundleErrAt(path string, b *bundle.Bundle, rule, hint, format string, args ...any) bundle.Problem {
	p := bundle.Errorf(path, rule, hint, format, args...)
	p.Package, p.Bundle = b.Package, b.Name
	return p
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}

// Problems returns every problem found in every catalog, sorted by path.
func (ix *Index) Problems() []bundle.Problem { return ix.problems }

// Catalogs returns the catalog names, highest priority first.
func (ix *Index) Catalogs() []string {
	out := make([]string, len(ix.catalogs))
	for i, c := range ix.catalogs {
		out[i] = c.Name
	}
	return out
}

// PackageNames returns every package name, sorted.
func (ix *Index) PackageNames() []string { return sortedKeys(ix.packages) }

// Package returns the package in each catalog that has it, highest priority first.
func (ix *Index) Package(name string) []*Package { return ix.packages[name] }

// Bundle returns the named bundle of a package from the highest-priority catalog that has it, or nil.
func (ix *Index) Bundle(pkg, name string) *bundle.Bundle {
	for _, p := range ix.packages[pkg] {
		for _, b := range p.Bundles {
			if b.Name == name {
				return b
			}
		}
	}
	return nil
}

// BundleVersion returns the bundle of a package with the version from the highest-priority catalog, or nil.
func (ix *Index) BundleVersion(pkg string, v semver.Version) *bundle.Bundle {
	for _, p := range ix.packages[pkg] {
		for _, b := range p.Bundles {
			if b.Version.EQ(v) {
				return b
			}
		}
	}
	return nil
}

// Owners returns the bundles that own (provide) the kind, from the named catalogs (every catalog when none is
// named): highest priority catalog first, then highest version first.
func (ix *Index) Owners(gvk schema.GroupVersionKind, catalogs ...string) []*bundle.Bundle {
	var out []*bundle.Bundle
	for _, b := range ix.owners[gvk] {
		if len(catalogs) == 0 || slices.Contains(catalogs, b.Catalog) {
			out = append(out, b)
		}
	}
	prio := map[string]int{}
	for i, c := range ix.catalogs {
		prio[c.Name] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Catalog != out[j].Catalog {
			return prio[out[i].Catalog] < prio[out[j].Catalog]
		}
		return out[i].Version.GT(out[j].Version)
	})
	return out
}

// OwnerPackages returns the names of the packages that own the kind, sorted.
func (ix *Index) OwnerPackages(gvk schema.GroupVersionKind) []string {
	set := map[string]bool{}
	for _, b := range ix.owners[gvk] {
		set[b.Package] = true
	}
	return sortedKeys(set)
}

// Edge is one catalog entry that upgrades from a version.
type Edge struct {
	Catalog string
	Channel string
	Entry   *Entry
	Kind    EdgeKind
}

// UpgradesFrom returns every catalog entry that replaces, skips or skip-ranges version v of a package (the bundle
// with that version in the catalogs gives the name replaces and skips refer to; name, when set, overrides it),
// in catalog order, then channel name, then highest version first.
func (ix *Index) UpgradesFrom(pkg string, v semver.Version, name string) []Edge {
	if name == "" {
		if b := ix.BundleVersion(pkg, v); b != nil {
			name = b.Name
		}
	}
	var out []Edge
	for _, p := range ix.packages[pkg] {
		for _, ch := range p.Channels {
			for _, e := range ch.Entries {
				if k := e.upgrade().EdgeFrom(name, v); k != "" {
					out = append(out, Edge{Catalog: p.Catalog, Channel: ch.Name, Entry: e, Kind: k})
				}
			}
		}
	}
	return out
}

// CRD returns the CustomResourceDefinition that defines a kind, from the best bundle that owns it (highest-priority
// catalog, highest version) and holds manifests, with that bundle. It is what the requirements loop creates for an
// OperatorVersion that needs a kind no CRD serves yet. It returns bundle.ErrNoManifests when no owner holds manifests,
// and ErrPackageNotFound when no bundle owns the kind. Only the named catalogs are looked in (every catalog when none
// is named).
func (ix *Index) CRD(gvk schema.GroupVersionKind, catalogs ...string) (*apiextv1.CustomResourceDefinition, *bundle.Bundle, error) {
	owners := ix.Owners(gvk, catalogs...)
	if len(owners) == 0 {
		if len(catalogs) > 0 {
			return nil, nil, fmt.Errorf("%w: no bundle in %s owns %s", ErrPackageNotFound, strings.Join(catalogs, ", "), gvk)
		}
		return nil, nil, fmt.Errorf("%w: no bundle owns %s", ErrPackageNotFound, gvk)
	}
	for _, b := range owners {
		m, err := b.Manifests()
		if err != nil {
			continue
		}
		if crd := m.OwnedCRD(gvk.Group, gvk.Kind); crd != nil {
			return crd, b, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: %w", gvk, bundle.ErrNoManifests)
}

// sortProblems orders problems by path, then rule, then detail, so output is stable.
func sortProblems(ps []bundle.Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		if ps[i].Rule != ps[j].Rule {
			return ps[i].Rule < ps[j].Rule
		}
		return ps[i].Detail < ps[j].Detail
	})
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
