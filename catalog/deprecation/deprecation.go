// Package deprecation reads what a catalog deprecates — File-Based Catalog olm.deprecations documents, which
// directory catalogs carry beside their bundles too (e.g. <package>/deprecations.yaml) — and decides what applies to
// a package, a channel and a bundle. The resolver prefers candidates that are not deprecated; an AppType whose
// package, channel or installed bundle is deprecated gets a Deprecated condition with the catalog's message.
package deprecation

import (
	"fmt"
	"sort"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/almproject/alm/catalog/bundle"
)

// Scope is what a deprecation is of.
type Scope string

// Scopes, most specific first.
const (
	ScopeBundle  Scope = "bundle"
	ScopeChannel Scope = "channel"
	ScopePackage Scope = "package"
)

// MaxMessage is the longest deprecation message kept (in bytes); a longer one is cut, as it ends up in conditions and
// resolution reasons of status.
const MaxMessage = 512

// Doc is an olm.deprecations document and the file it came from.
type Doc struct {
	declcfg.Deprecation
	Path string
}

// Set is what one catalog deprecates of one package. The zero Set (and nil) deprecates nothing.
type Set struct {
	// Package is the message deprecating the whole package, "" when it is not.
	Package string
	// Channels and Bundles map channel and bundle names to their messages.
	Channels map[string]string
	Bundles  map[string]string
}

// Verdict is what applies to one bundle followed on one channel: each deprecation, most specific first.
type Verdict []Deprecation

// Deprecation is one deprecation that applies.
type Deprecation struct {
	Scope   Scope
	Name    string
	Message string
}

// Of says what s deprecates of a bundle on a channel (either may be "": only the others are checked).
func (s *Set) Of(channel, bundleName string) Verdict {
	if s == nil {
		return nil
	}
	var v Verdict
	if m, ok := s.Bundles[bundleName]; ok && bundleName != "" {
		v = append(v, Deprecation{Scope: ScopeBundle, Name: bundleName, Message: m})
	}
	if m, ok := s.Channels[channel]; ok && channel != "" {
		v = append(v, Deprecation{Scope: ScopeChannel, Name: channel, Message: m})
	}
	if s.Package != "" {
		v = append(v, Deprecation{Scope: ScopePackage, Message: s.Package})
	}
	return v
}

// Deprecated says whether anything applies.
func (v Verdict) Deprecated() bool { return len(v) > 0 }

// Message is every deprecation's message, most specific first: "bundle p.v1: message; package: message".
func (v Verdict) Message() string {
	parts := make([]string, 0, len(v))
	for _, d := range v {
		if d.Scope == ScopePackage {
			parts = append(parts, fmt.Sprintf("package deprecated: %s", d.Message))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s deprecated: %s", d.Scope, d.Name, d.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// ChosenNote is what the resolver adds to a chosen candidate's detail when it is deprecated (every candidate
// that fits is, or it would not be chosen); "" when it is not.
func (v Verdict) ChosenNote() string {
	if !v.Deprecated() {
		return ""
	}
	return " (every candidate that fits is deprecated: " + v.Message() + ")"
}

// Index reads the olm.deprecations documents of one catalog into a Set per package. An entry whose reference is
// not an olm.package, olm.channel or olm.bundle, or names nothing, is a problem and ignored; a package's
// deprecations may be split over several documents. A message defaults to "deprecated".
func Index(docs []Doc) (map[string]*Set, []bundle.Problem) {
	out := map[string]*Set{}
	var problems []bundle.Problem
	for _, d := range docs {
		if d.Package == "" {
			problems = append(problems, bundle.Warnf(d.Path, bundle.RuleMalformedFBC, "name the package: package", "olm.deprecations without a package is ignored"))
			continue
		}
		s := out[d.Package]
		if s == nil {
			s = &Set{Channels: map[string]string{}, Bundles: map[string]string{}}
			out[d.Package] = s
		}
		for i, e := range d.Entries {
			if why := s.add(e); why != "" {
				p := bundle.Warnf(d.Path, bundle.RuleMalformedFBC, "reference.schema is olm.package, olm.channel (with name) or olm.bundle (with name)",
					"olm.deprecations of %s: entries[%d] is ignored: %s", d.Package, i, why)
				p.Package = d.Package
				problems = append(problems, p)
			}
		}
	}
	return out, problems
}

// Docs renders s as the olm.deprecations document of package pkg (none when s deprecates nothing), entries in a
// stable order: the package, then channels and bundles by name.
func (s *Set) Docs(pkg string) []declcfg.Deprecation {
	if s == nil || (s.Package == "" && len(s.Channels) == 0 && len(s.Bundles) == 0) {
		return nil
	}
	d := declcfg.Deprecation{Schema: declcfg.SchemaDeprecation, Package: pkg}
	if s.Package != "" {
		d.Entries = append(d.Entries, declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaPackage}, Message: s.Package})
	}
	for _, schema := range []string{declcfg.SchemaChannel, declcfg.SchemaBundle} {
		m := s.Channels
		if schema == declcfg.SchemaBundle {
			m = s.Bundles
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			d.Entries = append(d.Entries, declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: schema, Name: n}, Message: m[n]})
		}
	}
	return []declcfg.Deprecation{d}
}

// add adds one entry, or says why it cannot.
func (s *Set) add(e declcfg.DeprecationEntry) string {
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		msg = "deprecated"
	}
	if len(msg) > MaxMessage {
		msg = strings.ToValidUTF8(msg[:MaxMessage], "") + " …"
	}
	ref := e.Reference
	switch {
	case ref.Schema == declcfg.SchemaPackage:
		s.Package = msg
	case ref.Schema == declcfg.SchemaChannel && ref.Name != "":
		s.Channels[ref.Name] = msg
	case ref.Schema == declcfg.SchemaBundle && ref.Name != "":
		s.Bundles[ref.Name] = msg
	case ref.Name == "" && ref.Schema != "":
		return fmt.Sprintf("reference %s names nothing", ref.Schema)
	default:
		return fmt.Sprintf("reference schema %q is not olm.package, olm.channel or olm.bundle", ref.Schema)
	}
	return ""
}
