package index

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/deprecation"
)

// Request asks which bundle of a package to install or upgrade to.
type Request struct {
	// Package to resolve. Required.
	Package string
	// Channel to resolve in; empty means the package's default channel (from the highest-priority catalog).
	Channel string
	// Range optionally restricts versions, e.g. ">=1.0.0 <2.0.0" (blang/semver range syntax).
	Range string
	// From is the installed version, if any: the result is then the best successor reachable from it by
	// replaces, skips and skipRange edges in the channel.
	From string
	// FromName is the installed bundle's name; empty means the catalog bundle with version From.
	FromName string
	// Catalogs, when set, restricts resolution to these catalogs.
	Catalogs []string
	// Exclude are bundles not to offer, by name, each with why (an AppType's rolled back versions): such a bundle
	// is never chosen nor a hop of the upgrade path, but a bundle that upgrades from it is reachable through it.
	Exclude map[string]string
}

// Reason says why a candidate was or was not chosen.
type Reason string

// Reasons, in pipeline order: a candidate gets the first that applies.
const (
	ReasonChosen               Reason = "Chosen"
	ReasonRejected             Reason = "RejectedBundle"
	ReasonCatalogNotSelected   Reason = "CatalogNotSelected"
	ReasonOtherChannel         Reason = "OtherChannel"
	ReasonOutOfRange           Reason = "OutOfRange"
	ReasonRolledBack           Reason = "RolledBack"
	ReasonInstalled            Reason = "Installed"
	ReasonNotNewer             Reason = "NotNewer"
	ReasonNotSuccessor         Reason = "NotSuccessor"
	ReasonLowerVersion         Reason = "LowerVersion"
	ReasonLowerPriorityCatalog Reason = "LowerPriorityCatalog"
	// ReasonDeprecated: the catalog deprecates the bundle (or its channel or package) and a candidate it does not
	// deprecate is chosen instead.
	ReasonDeprecated Reason = "Deprecated"
)

// Candidate is one bundle considered by Resolve.
type Candidate struct {
	// Name and Version of the bundle (Version is zero for a rejected bundle).
	Name    string
	Version semver.Version
	Catalog string
	// Bundle is nil for rejected bundles.
	Bundle *bundle.Bundle
	// Entry is the bundle's entry in the resolved channel, nil when it is not in that channel.
	Entry  *Entry
	Reason Reason
	// Detail explains the reason to a person.
	Detail string
	// Deprecated is what its catalog deprecates of it, its channel and its package.
	Deprecated deprecation.Verdict
}

// Result is the outcome of Resolve: the chosen bundle (nil when nothing fits, e.g. already at the newest version)
// and every other candidate with the reason it was not chosen.
type Result struct {
	Request Request
	// Channel is the channel resolved in (the default channel when the request named none).
	Channel string
	// Chosen is the chosen candidate, or nil.
	Chosen *Candidate
	// Path is the upgrade path from the installed bundle to the chosen one (bundle names, installed first) when
	// the request had From; a single hop has two names.
	Path []string
	// Candidates are all candidates, chosen first, then in catalog order and highest version first.
	Candidates []Candidate
	// Deprecated is what the catalogs deprecate of the installed bundle (From) or, with nothing installed, the
	// chosen one, of the channel and of the package.
	Deprecated deprecation.Verdict
}

// Errors returned by Resolve for requests that cannot be resolved at all.
var (
	ErrPackageNotFound = errors.New("package not found")
	ErrChannelNotFound = errors.New("channel not found")
	ErrInvalidRequest  = errors.New("invalid request")
)

// Resolve picks the bundle for a request with a deterministic filter pipeline: rejected -> catalog -> channel ->
// version range -> successor of the installed version -> highest version -> catalog priority. Every candidate
// not chosen carries the reason. The error is only for requests that cannot be answered (unknown package or
// channel, invalid range or version); "nothing fits" is a Result with Chosen == nil.
func (ix *Index) Resolve(req Request) (Result, error) {
	res := Result{Request: req}
	q, err := parseRequest(req)
	if err != nil {
		return res, err
	}
	all := ix.packages[req.Package]
	var pkgs []*Package
	for _, p := range all {
		if q.selected(p.Catalog) {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return res, fmt.Errorf("%w: %q", ErrPackageNotFound, req.Package)
	}
	channels, err := q.selectChannel(pkgs)
	res.Channel = q.channel
	if err != nil {
		return res, err
	}

	// Installed bundle name and the successors reachable from it.
	fromName := req.FromName
	if req.From != "" {
		if fromName == "" {
			if b := ix.BundleVersion(req.Package, q.from); b != nil {
				fromName = b.Name
			}
		}
		q.reach = reachable(channels, fromName, q.from)
	}
	res.Candidates = q.candidates(all, pkgs, channels)
	best := pick(res.Candidates)
	if req.From == "" && best >= 0 {
		fromName = res.Candidates[best].Name // what the Deprecated verdict is about: installed, else chosen
	}
	res.Deprecated = deprecated(pkgs, q.channel, fromName)
	if best < 0 {
		return res, nil
	}
	// Chosen first, the others keep their order.
	res.Candidates[best].Detail = chosenDetail(req) + res.Candidates[best].Deprecated.ChosenNote()
	chosen := res.Candidates[best]
	copy(res.Candidates[1:best+1], res.Candidates[:best])
	res.Candidates[0] = chosen
	res.Chosen = &res.Candidates[0]
	if req.From != "" {
		res.Path = withoutExcluded(q.reach.path(chosen.Name, req.From), req.Exclude)
	}
	return res, nil
}

// withoutExcluded drops the excluded bundles from the inner hops of an upgrade path: the hop after one that was
// rolled back goes straight from the installed version (the rollback stands in for the rolled back version).
func withoutExcluded(path []string, exclude map[string]string) []string {
	if len(exclude) == 0 || len(path) <= 2 {
		return path
	}
	out := []string{path[0]}
	for _, name := range path[1 : len(path)-1] {
		if exclude[name] == "" {
			out = append(out, name)
		}
	}
	return append(out, path[len(path)-1])
}

// parseRequest parses the request's range and installed version.
func parseRequest(req Request) (query, error) {
	q := query{req: req}
	if req.Range != "" {
		r, err := semver.ParseRange(req.Range)
		if err != nil {
			return q, fmt.Errorf("%w: range %q: %w", ErrInvalidRequest, req.Range, err)
		}
		q.rng = r
	}
	if req.From != "" {
		v, err := semver.ParseTolerant(req.From)
		if err != nil {
			return q, fmt.Errorf("%w: installed version %q: %w", ErrInvalidRequest, req.From, err)
		}
		q.from = v
	}
	return q, nil
}

// selected says whether the request may resolve from the catalog.
func (q query) selected(catalog string) bool {
	return len(q.req.Catalogs) == 0 || slices.Contains(q.req.Catalogs, catalog)
}

// selectChannel sets the channel to resolve in (the request's, else the first default channel of the selected
// packages) and returns it per selected package, nil where a package lacks it.
func (q *query) selectChannel(pkgs []*Package) ([]*Channel, error) {
	q.channel = q.req.Channel
	if q.channel == "" {
		for _, p := range pkgs {
			if p.DefaultChannel != "" {
				q.channel = p.DefaultChannel
				break
			}
		}
		if q.channel == "" && hasChannels(pkgs) {
			return nil, fmt.Errorf("%w: package %q has no default channel; name one", ErrChannelNotFound, q.req.Package)
		}
	}
	var channels []*Channel
	found := false
	for _, p := range pkgs {
		ch := p.Channel(q.channel)
		channels = append(channels, ch)
		found = found || ch != nil
	}
	if !found && hasChannels(pkgs) {
		return nil, fmt.Errorf("%w: package %q has no channel %q", ErrChannelNotFound, q.req.Package, q.channel)
	}
	return channels, nil
}

// candidates are every bundle of the package in every catalog, with the first filter that rejects it, and the
// rejected bundles; pkgs are the selected packages and channels their channels.
func (q query) candidates(all, pkgs []*Package, channels []*Channel) []Candidate {
	n := 0
	for _, p := range all {
		n += len(p.Bundles) + len(p.Rejected)
	}
	out := make([]Candidate, 0, n)
	for _, p := range all {
		var ch *Channel
		for i, sp := range pkgs {
			if sp == p {
				ch = channels[i]
			}
		}
		for _, b := range p.Bundles {
			c := Candidate{Name: b.Name, Version: b.Version, Catalog: p.Catalog, Bundle: b}
			if ch != nil {
				c.Entry = ch.Entry(b.Name)
			}
			c.Reason, c.Detail = q.filter(p, b, c.Entry, q.selected(p.Catalog))
			c.Deprecated = p.Deprecations.Of(q.channel, b.Name)
			out = append(out, c)
		}
		for _, r := range p.Rejected {
			out = append(out, Candidate{Name: r.Bundle, Catalog: p.Catalog, Reason: ReasonRejected,
				Detail: r.Rule + ": " + r.Detail})
		}
	}
	return out
}

// query is a parsed Request.
type query struct {
	req     Request
	channel string
	rng     semver.Range // nil: any version
	from    semver.Version
	reach   reachability // successors of from, when req.From is set
}

// filter is the pipeline's filters for one bundle: the first reason it cannot be chosen, or "" when it can.
func (q query) filter(p *Package, b *bundle.Bundle, entry *Entry, catalogSelected bool) (Reason, string) {
	installed := q.req.From != ""
	switch {
	case !catalogSelected:
		return ReasonCatalogNotSelected, "catalog " + p.Catalog + " is not among the requested catalogs"
	case entry == nil:
		return ReasonOtherChannel, "not in channel " + q.channel + " (channels: " + strings.Join(channelsOf(p, b), ", ") + ")"
	case q.rng != nil && !q.rng(b.Version):
		return ReasonOutOfRange, "outside the range " + q.req.Range
	case q.req.Exclude[b.Name] != "":
		return ReasonRolledBack, q.req.Exclude[b.Name]
	case installed && b.Version.EQ(q.from):
		return ReasonInstalled, "is the installed version"
	case installed && b.Version.LT(q.from):
		return ReasonNotNewer, "older than the installed version " + q.req.From
	case installed && !q.reach.reached(b.Name):
		return ReasonNotSuccessor, "no replaces, skips or skipRange path leads to it from " + q.req.From
	}
	return "", ""
}

// pick chooses among the candidates that passed the filters: the highest version, then the first in catalog
// priority order (candidates are in that order). It gives every other passing candidate its reason and returns
// the chosen index, or -1.
func pick(cands []Candidate) int {
	best := -1
	for i, c := range cands {
		if c.Reason == "" && (best < 0 || preferred(c, cands[best])) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	chosen := &cands[best]
	for i := range cands {
		c := &cands[i]
		switch {
		case i == best || c.Reason != "":
		case c.Deprecated.Deprecated() && !chosen.Deprecated.Deprecated():
			c.Reason, c.Detail = ReasonDeprecated, c.Deprecated.Message()+"; "+chosen.Name+", which is not deprecated, is preferred"
		case c.Version.LT(chosen.Version):
			c.Reason, c.Detail = ReasonLowerVersion, "lower than the chosen version"
		default:
			c.Reason, c.Detail = ReasonLowerPriorityCatalog, "the same version in catalog "+chosen.Catalog+" has higher priority"
		}
	}
	chosen.Reason = ReasonChosen
	return best
}

// preferred says whether candidate a is preferred to b: one the catalog does not deprecate, then the higher version.
func preferred(a, b Candidate) bool {
	if a.Deprecated.Deprecated() != b.Deprecated.Deprecated() {
		return !a.Deprecated.Deprecated()
	}
	return a.Version.GT(b.Version)
}

// deprecated is what the first selected catalog that deprecates anything of the bundle name on channel deprecates.
func deprecated(pkgs []*Package, channel, name string) deprecation.Verdict {
	for _, p := range pkgs {
		if v := p.Deprecations.Of(channel, name); v.Deprecated() {
			return v
		}
	}
	return nil
}

// reachability is the result of a breadth-first walk over successor edges from the installed bundle.
type reachability struct {
	nodes []reachNode    // nodes[0] is the installed bundle
	index map[string]int // bundle name -> node, for reached bundles
}

type reachNode struct {
	name string
	v    semver.Version
	pred int // index of the node it was reached from; -1 for the installed bundle
}

func (r reachability) reached(name string) bool {
	_, ok := r.index[name]
	return ok
}

// path returns the bundle names from the installed bundle (shown as from when its name is unknown) to name.
func (r reachability) path(name, from string) []string {
	i, ok := r.index[name]
	if !ok {
		return nil
	}
	var out []string
	for ; i >= 0; i = r.nodes[i].pred {
		shown := r.nodes[i].name
		if i == 0 && shown == "" {
			shown = from
		}
		out = append(out, shown)
	}
	for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
		out[a], out[b] = out[b], out[a]
	}
	return out
}

// reachable walks successor edges (replaces, skips, skipRange, always to a newer version) breadth first from the
// installed bundle over the channel's entries in every catalog.
func reachable(channels []*Channel, fromName string, from semver.Version) reachability {
	var entries []*Entry // each channel's entries are highest version first
	for _, ch := range channels {
		if ch != nil {
			entries = append(entries, ch.Entries...)
		}
	}
	done := make([]bool, len(entries))
	r := reachability{nodes: make([]reachNode, 1, 8), index: make(map[string]int, 8)}
	r.nodes[0] = reachNode{name: fromName, v: from, pred: -1}
	for head := 0; head < len(r.nodes); head++ {
		x := r.nodes[head]
		for i, e := range entries {
			if done[i] || e.upgrade().EdgeFrom(x.name, x.v) == "" {
				continue
			}
			done[i] = true
			name := e.Bundle.Name
			if _, seen := r.index[name]; seen || name == fromName {
				continue // the same bundle from another catalog
			}
			r.index[name] = len(r.nodes)
			r.nodes = append(r.nodes, reachNode{name: name, v: e.Bundle.Version, pred: head})
		}
	}
	return r
}

// hasChannels reports whether any of the packages has a channel; a package whose bundles were all rejected has
// none, and resolving it lists the rejections instead of failing.
func hasChannels(pkgs []*Package) bool {
	for _, p := range pkgs {
		if len(p.Channels) > 0 {
			return true
		}
	}
	return false
}

func chosenDetail(req Request) string {
	switch {
	case req.From != "":
		return "highest version reachable from " + req.From
	case req.Range != "":
		return "highest version in the channel and range"
	}
	return "highest version in the channel"
}

func channelsOf(p *Package, b *bundle.Bundle) []string {
	var out []string
	for _, ch := range p.Channels {
		if ch.Entry(b.Name) != nil {
			out = append(out, ch.Name)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// Explain prints the result for a person: the chosen bundle, the upgrade path, and why each other candidate was not
// chosen.
func (r Result) Explain() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "package %s, channel %s", r.Request.Package, orNone(r.Channel))
	if r.Request.Channel == "" {
		sb.WriteString(" (default)")
	}
	if r.Request.Range != "" {
		fmt.Fprintf(&sb, ", range %s", r.Request.Range)
	}
	if r.Request.From != "" {
		fmt.Fprintf(&sb, ", installed %s", r.Request.From)
	}
	sb.WriteString("\n")
	if r.Chosen == nil {
		if r.Request.From != "" {
			sb.WriteString("chosen: none (no newer version is reachable: the installed version is the newest that fits)\n")
		} else {
			sb.WriteString("chosen: none (no bundle fits)\n")
		}
	} else {
		c := r.Chosen
		fmt.Fprintf(&sb, "chosen: %s (%s) from catalog %s: %s\n", c.Name, c.Version.String(), c.Catalog, c.Detail)
		if len(r.Path) > 1 {
			fmt.Fprintf(&sb, "upgrade path: %s\n", strings.Join(r.Path, " -> "))
		}
	}
	if r.Deprecated.Deprecated() {
		fmt.Fprintf(&sb, "deprecated: %s\n", r.Deprecated.Message())
	}
	others := 0
	for _, c := range r.Candidates {
		if c.Reason != ReasonChosen {
			others++
		}
	}
	if others == 0 {
		return sb.String()
	}
	sb.WriteString("not chosen:\n")
	for _, c := range r.Candidates {
		if c.Reason == ReasonChosen {
			continue
		}
		v := "?"
		if c.Bundle != nil {
			v = c.Version.String()
		}
		fmt.Fprintf(&sb, "  %s (%s) [%s]: %s: %s\n", c.Name, v, c.Catalog, c.Reason, c.Detail)
	}
	return sb.String()
}

// OperatorVersion returns the OperatorVersion template of the chosen bundle in a namespace, with the resolved
// channel and the channel entry's replaces, skips and skipRange. Callers set spec.source.
func (r Result) OperatorVersion(namespace string) (*almv1alpha1.OperatorVersion, error) {
	if r.Chosen == nil {
		return nil, errors.New("nothing was chosen")
	}
	ov, err := r.Chosen.Bundle.OperatorVersion(namespace)
	if err != nil {
		return nil, err
	}
	ov.Spec.Channel = r.Channel
	if e := r.Chosen.Entry; e != nil {
		ov.Spec.Replaces, ov.Spec.Skips, ov.Spec.SkipRange = e.Replaces, append([]string(nil), e.Skips...), e.SkipRange
	}
	return ov, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
