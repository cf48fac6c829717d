package index

import (
	"sort"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/deprecation"
)

// builder applies the catalog rules to one catalog's contents. Each step reads what the previous ones kept; an
// error excludes a bundle (excluded, Package.Rejected), a warning is only reported.
type builder struct {
	catalog  *Catalog
	problems []bundle.Problem
	pkgs     map[string]*Package
	byName   map[string]map[string]*bundle.Bundle // package -> bundle name -> bundle
	kept     []*bundle.Bundle                     // bundles that passed the bundle rules, in path order
	excluded map[*bundle.Bundle]bool
	entries  map[chanKey][]*Entry
	pkgDoc   map[string]string // package -> file of its olm.package document
}

// chanKey names a channel of a package.
type chanKey struct{ pkg, ch string }

// buildCatalog applies the catalog rules to one catalog's contents and returns its packages, sorted by name, and
// every problem found.
func buildCatalog(c *Catalog) ([]*Package, []bundle.Problem) {
	b := &builder{
		catalog:  c,
		problems: append([]bundle.Problem(nil), c.Contents.Problems...),
		pkgs:     map[string]*Package{},
		byName:   map[string]map[string]*bundle.Bundle{},
		excluded: map[*bundle.Bundle]bool{},
		entries:  map[chanKey][]*Entry{},
		pkgDoc:   map[string]string{},
	}
	for _, p := range c.Contents.Problems {
		if p.IsError() && p.Package != "" && p.Bundle != "" {
			b.pkg(p.Package).Rejected = append(b.pkg(p.Package).Rejected, p)
		}
	}
	b.addBundles()
	b.checkOwnedKinds()
	b.addPackageDocs()
	b.addChannels()
	b.parseSkipRanges()
	b.excludeReplacesCycles()
	pkgs := b.assemble()
	deprecations, problems := deprecation.Index(c.Contents.Deprecations)
	for _, p := range pkgs {
		p.Deprecations = deprecations[p.Name]
	}
	return pkgs, append(b.problems, problems...)
}

func (b *builder) pkg(name string) *Package {
	p := b.pkgs[name]
	if p == nil {
		p = &Package{Name: name, Catalog: b.catalog.Name, Priority: b.catalog.Priority}
		b.pkgs[name] = p
	}
	return p
}

// reject reports an error that excludes a bundle.
func (b *builder) reject(bd *bundle.Bundle, p bundle.Problem) {
	b.excluded[bd] = true
	b.problems = append(b.problems, p)
	pk := b.pkg(p.Package)
	pk.Rejected = append(pk.Rejected, p)
}

func (b *builder) warn(p bundle.Problem) {
	p.Severity = bundle.SeverityWarning
	b.problems = append(b.problems, p)
}

// addBundles keeps the first bundle of each name and of each version in a package, by path and then by order
// within a file.
func (b *builder) addBundles() {
	bundles := append([]*bundle.Bundle(nil), b.catalog.Contents.Bundles...)
	sort.SliceStable(bundles, func(i, j int) bool { return bundles[i].Path < bundles[j].Path })
	byVersion := map[string]map[string]*bundle.Bundle{}
	for _, bd := range bundles {
		bd.Catalog = b.catalog.Name
		b.pkg(bd.Package)
		if b.byName[bd.Package] == nil {
			b.byName[bd.Package], byVersion[bd.Package] = map[string]*bundle.Bundle{}, map[string]*bundle.Bundle{}
		}
		if first := b.byName[bd.Package][bd.Name]; first != nil {
			b.reject(bd, bundleErr(bd, bundle.RuleDuplicateBundle, "give every bundle a unique name (the CSV's metadata.name)",
				"bundle %s is also defined in %s; the first one is kept", bd.Name, first.Path))
			continue
		}
		vkey := bd.Version.String()
		if first := byVersion[bd.Package][vkey]; first != nil {
			b.reject(bd, bundleErr(bd, bundle.RuleDuplicateVersion, "each version of a package is one bundle; bump the version",
				"version %s of package %s is already bundle %s (%s); this one is excluded", vkey, bd.Package, first.Name, first.Path))
			continue
		}
		b.byName[bd.Package][bd.Name], byVersion[bd.Package][vkey] = bd, bd
		b.kept = append(b.kept, bd)
	}
}

// checkOwnedKinds warns about a group/kind that bundles of two packages own. Both packages are served (real
// catalogs have such pairs); only installing the second owner where the first already owns the CRD is refused, by
// the installer, naming the owning package.
func (b *builder) checkOwnedKinds() {
	type owner struct{ pkg, bundle string }
	owners := map[schema.GroupKind]owner{}
	warned := map[string]bool{}
	byPackage := append([]*bundle.Bundle(nil), b.kept...)
	sort.SliceStable(byPackage, func(i, j int) bool { return byPackage[i].Package < byPackage[j].Package })
	for _, bd := range byPackage {
		for _, gvk := range bd.Provides {
			gk := gvk.GroupKind()
			o, ok := owners[gk]
			if !ok {
				owners[gk] = owner{bd.Package, bd.Name}
				continue
			}
			if key := gk.String() + "/" + bd.Package; o.pkg != bd.Package && !b.excluded[bd] && !warned[key] {
				warned[key] = true
				p := bundleErr(bd, bundle.RuleCRDOwnedTwice, "install only one of them per cluster, or have one list the CRD under required",
					"%s is owned by package %s (bundle %s) and by package %s: both are served; a cluster can install only one of them", gk, o.pkg, o.bundle, bd.Package)
				b.warn(p)
			}
		}
	}
}

// addPackageDocs applies olm.package documents; the first one of a package wins.
func (b *builder) addPackageDocs() {
	for _, d := range b.catalog.Contents.Packages {
		if first, ok := b.pkgDoc[d.Name]; ok {
			b.warn(bundle.Problem{Path: d.Path, Rule: bundle.RuleDuplicatePackage, Package: d.Name, Hint: "define each package once",
				Detail: "package " + d.Name + " is also defined in " + first + "; the first definition is used"})
			continue
		}
		b.pkgDoc[d.Name] = d.Path
		b.pkg(d.Name).DefaultChannel = d.DefaultChannel
	}
}

// addChannels collects channel entries: olm.channel documents first, then the channels bundles declare in their
// annotations (with the CSV's replaces, skips and skipRange). The first entry for a bundle in a channel wins.
func (b *builder) addChannels() {
	seen := map[chanKey]map[string]bool{}
	add := func(k chanKey, e declcfg.ChannelEntry, path string) {
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		if seen[k][e.Name] {
			return
		}
		seen[k][e.Name] = true
		bd := b.byName[k.pkg][e.Name]
		if bd == nil && !isRejected(b.pkgs[k.pkg], e.Name) {
			b.warn(bundle.Problem{Path: path, Rule: bundle.RuleMissingBundle, Package: k.pkg, Bundle: e.Name, Hint: "add the bundle or remove the entry",
				Detail: "channel " + k.ch + " lists bundle " + e.Name + ", which the catalog does not have; the entry is ignored"})
		}
		if bd == nil || b.excluded[bd] {
			return
		}
		b.entries[k] = append(b.entries[k], &Entry{Bundle: bd, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange, path: path})
	}
	for _, d := range b.catalog.Contents.Channels {
		b.pkg(d.Package)
		k := chanKey{d.Package, d.Name}
		if _, ok := b.entries[k]; !ok {
			b.entries[k] = nil
		}
		for _, e := range d.Entries {
			add(k, e, d.Path)
		}
	}
	for _, bd := range b.kept {
		if b.excluded[bd] {
			continue
		}
		for _, ch := range bd.Channels() {
			add(chanKey{bd.Package, ch}, bd.ChannelEntry(), bd.Path)
		}
	}
}

// parseSkipRanges parses each entry's skipRange once (entries sharing a range share the parsed one); an invalid
// range excludes the bundle.
func (b *builder) parseSkipRanges() {
	cache := map[string]semver.Range{}
	for _, k := range sortedChanKeys(b.entries) {
		for _, e := range b.entries[k] {
			if e.SkipRange == "" || b.excluded[e.Bundle] {
				continue
			}
			r, ok := cache[e.SkipRange]
			if !ok {
				var err error
				if r, err = semver.ParseRange(e.SkipRange); err != nil {
					b.reject(e.Bundle, bundleErrAt(e.path, e.Bundle, bundle.RuleInvalidSkipRange, "use a semver range such as '>=1.0.0 <1.2.0'",
						"channel %s: skipRange %q of %s: %v", k.ch, e.SkipRange, e.Bundle.Name, err))
					continue
				}
				cache[e.SkipRange] = r
			}
			e.skipRange = r
		}
	}
}

// excludeReplacesCycles excludes every bundle on a replaces cycle.
func (b *builder) excludeReplacesCycles() {
	for _, k := range sortedChanKeys(b.entries) {
		for _, e := range replacesCycle(b.entries[k], b.excluded) {
			b.reject(e.Bundle, bundleErrAt(e.path, e.Bundle, bundle.RuleReplacesCycle, "replaces must point to an older version; break the cycle",
				"channel %s: %s is in a replaces cycle", k.ch, e.Bundle.Name))
		}
	}
}

// assemble builds the packages from what was kept and reports the remaining warnings: dangling replaces,
// replaces of a version that is not older, bundles in no channel, no usable default channel.
func (b *builder) assemble() []*Package {
	inChannel := map[*bundle.Bundle]bool{}
	for _, k := range sortedChanKeys(b.entries) {
		p := b.pkg(k.pkg)
		ch := &Channel{Name: k.ch}
		names := map[string]*Entry{}
		for _, e := range b.entries[k] {
			if !b.excluded[e.Bundle] {
				ch.Entries = append(ch.Entries, e)
				names[e.Bundle.Name] = e
				inChannel[e.Bundle] = true
			}
		}
		for _, e := range ch.Entries {
			if e.Replaces == "" {
				continue
			}
			if r := names[e.Replaces]; r == nil {
				hint := "the edge is ignored; this is normal for the oldest bundle of a pruned channel"
				if isRejected(p, e.Replaces) {
					hint = "the replaced bundle was excluded; see its own problem"
				}
				b.warn(bundle.Problem{Path: e.path, Rule: bundle.RuleDanglingReplaces, Package: k.pkg, Bundle: e.Bundle.Name, Hint: hint,
					Detail: "channel " + k.ch + ": " + e.Bundle.Name + " replaces " + e.Replaces + ", which is not in the channel"})
			} else if !r.Bundle.Version.LT(e.Bundle.Version) {
				b.warn(bundle.Problem{Path: e.path, Rule: bundle.RuleReplacesNotLower, Package: k.pkg, Bundle: e.Bundle.Name, Hint: "replaces names the previous, older version",
					Detail: "channel " + k.ch + ": " + e.Bundle.Name + " (" + e.Bundle.Version.String() + ") replaces " + r.Bundle.Name +
						" (" + r.Bundle.Version.String() + "), which is not older; the edge is never used"})
			}
		}
		sortEntries(ch.Entries)
		p.Channels = append(p.Channels, ch)
	}

	defaultFrom := map[string]*bundle.Bundle{} // package -> newest bundle that names a default channel
	for _, bd := range b.kept {
		if b.excluded[bd] {
			continue
		}
		p := b.pkg(bd.Package)
		p.Bundles = append(p.Bundles, bd)
		if !inChannel[bd] {
			b.warn(bundle.Problem{Path: bd.Path, Rule: bundle.RuleBundleNotInChannel, Package: bd.Package, Bundle: bd.Name,
				Hint:   "add it to a channel (bundle annotation or olm.channel entry)",
				Detail: "bundle " + bd.Name + " is in no channel and cannot be resolved"})
		}
		if bd.DefaultChannel() != "" && (defaultFrom[bd.Package] == nil || bd.Version.GT(defaultFrom[bd.Package].Version)) {
			defaultFrom[bd.Package] = bd
		}
	}

	var out []*Package
	for _, name := range sortedKeys(b.pkgs) {
		p := b.pkgs[name]
		sort.SliceStable(p.Bundles, func(i, j int) bool { return p.Bundles[i].Version.GT(p.Bundles[j].Version) })
		path := b.pkgDoc[name]
		if p.DefaultChannel == "" && defaultFrom[name] != nil {
			p.DefaultChannel, path = defaultFrom[name].DefaultChannel(), defaultFrom[name].Path
		}
		if p.DefaultChannel == "" && len(p.Channels) == 1 {
			p.DefaultChannel = p.Channels[0].Name
		}
		if path == "" && len(p.Bundles) > 0 {
			path = p.Bundles[0].Path
		}
		if p.DefaultChannel == "" && len(p.Channels) > 1 || p.DefaultChannel != "" && p.Channel(p.DefaultChannel) == nil && len(p.Bundles) > 0 {
			b.warn(bundle.Problem{Path: path, Rule: bundle.RuleDefaultChannel, Package: name,
				Detail: "package " + name + " has no usable default channel (" + quoteOrNone(p.DefaultChannel) + "); requests must name a channel",
				Hint:   "set defaultChannel (olm.package) or operators.operatorframework.io.bundle.channel.default.v1 to an existing channel"})
		}
		out = append(out, p)
	}
	return out
}
