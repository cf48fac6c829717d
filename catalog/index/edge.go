package index

import (
	"slices"

	"github.com/blang/semver/v4"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// EdgeKind is how one version upgrades from another.
type EdgeKind string

// Edge kinds, in the order the rule tries them.
const (
	EdgeReplaces  EdgeKind = "replaces"
	EdgeSkips     EdgeKind = "skips"
	EdgeSkipRange EdgeKind = "skipRange"
)

// Upgrade is what one version declares about the versions it upgrades from: the replaces, skips and skipRange of a
// channel entry, or of an installed OperatorVersion. It is the one upgrade graph: the catalog's index and resolver
// and the lifecycle loops all ask EdgeFrom.
type Upgrade struct {
	// Version is the version that upgrades.
	Version semver.Version
	// Replaces names the version it upgrades from.
	Replaces string
	// Skips name versions it may also upgrade from directly.
	Skips []string
	// SkipRange is the parsed range of versions it may upgrade from directly; nil for none.
	SkipRange semver.Range
}

// EdgeFrom is the upgrade rule: u upgrades from the version named name at version v when u is newer than v and
// names it in replaces (EdgeReplaces) or skips (EdgeSkips), or its skipRange includes v (EdgeSkipRange). An edge
// never points to a version that is not older: a replaces or skips naming a newer or equal version is no edge
// (the catalog reports it as replaces-not-lower). An empty name matches by skipRange only. It returns "" when u
// does not upgrade from v.
func (u Upgrade) EdgeFrom(name string, v semver.Version) EdgeKind {
	switch {
	case !u.Version.GT(v):
		return ""
	case name != "" && u.Replaces == name:
		return EdgeReplaces
	case name != "" && slices.Contains(u.Skips, name):
		return EdgeSkips
	case u.SkipRange != nil && u.SkipRange(v):
		return EdgeSkipRange
	}
	return ""
}

// UpgradeOf is what an OperatorVersion declares it upgrades from. An invalid skipRange counts as none (the
// catalog rejects bundles with one; an OperatorVersion written by hand gets no skipRange edges).
func UpgradeOf(ov *almv1alpha1.OperatorVersion) Upgrade {
	u := Upgrade{Version: ov.Spec.Version.Version, Replaces: ov.Spec.Replaces, Skips: ov.Spec.Skips}
	if ov.Spec.SkipRange != "" {
		if r, err := semver.ParseRange(ov.Spec.SkipRange); err == nil {
			u.SkipRange = r
		}
	}
	return u
}

// upgrade is what the entry declares it upgrades from.
func (e *Entry) upgrade() Upgrade {
	return Upgrade{Version: e.Bundle.Version, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.skipRange}
}
