package index

import (
	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// MaxRejectedInStatus is how many rejected bundles a CatalogSource status lists.
const MaxRejectedInStatus = 100

// Status summarizes one catalog of the index in the shape of CatalogSourceStatus.
type Status struct {
	Packages []almv1alpha1.PackageSummary
	Bundles  int
	// Rejected lists the errors that excluded bundles (at most MaxRejectedInStatus); RejectedCount counts them all.
	Rejected      []almv1alpha1.RejectedBundle
	RejectedCount int
}

// Status summarizes a catalog for its CatalogSource status: packages with their channels, default channel and
// newest version on it, the bundle count, and the rejected bundles with file, rule and message.
func (ix *Index) Status(catalog string) Status {
	var st Status
	for _, name := range ix.PackageNames() {
		for _, p := range ix.packages[name] {
			if p.Catalog != catalog {
				continue
			}
			st.Bundles += len(p.Bundles)
			if len(p.Bundles) > 0 {
				sum := almv1alpha1.PackageSummary{Name: p.Name, DefaultChannel: p.DefaultChannel, Channels: p.ChannelNames()}
				if ch := p.Channel(p.DefaultChannel); ch != nil && ch.Head() != nil {
					sum.LatestVersion = ch.Head().Bundle.Version.String()
				}
				st.Packages = append(st.Packages, sum)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range ix.problems {
		if !p.IsError() || seen[p.Path+"\x00"+p.Bundle] {
			continue
		}
		if p.Catalog != catalog {
			continue
		}
		seen[p.Path+"\x00"+p.Bundle] = true
		st.RejectedCount++
		if len(st.Rejected) < MaxRejectedInStatus {
			name := p.Bundle
			if name == "" {
				name = p.Path
			}
			msg := p.Detail
			if p.Hint != "" {
				msg += " (hint: " + p.Hint + ")"
			}
			st.Rejected = append(st.Rejected, almv1alpha1.RejectedBundle{Name: name, File: p.Path, Rule: p.Rule, Message: msg})
		}
	}
	return st
}
