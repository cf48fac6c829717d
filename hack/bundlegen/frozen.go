package bundlegen

import (
	"fmt"
	"sort"

	"github.com/blang/semver/v4"
)

// A change to a type that published CRDs share (e.g. dropping a validation rule of a reference, or rewording a
// field's description) would change every published bundle generated from crdDirectory. crdsBefore keeps a copy of
// the CRD directory as it was when a version was published: the bundles of versions before the entry's version are
// generated from the copy (with crdsSince, fieldsSince and printer columns applied as before), so they stay byte
// for byte what was published while crdDirectory moves on.

// FrozenCRDs is a copy of the CRD directory that versions before Version are generated from.
type FrozenCRDs struct {
	// Version is the first version generated from a later copy (or from crdDirectory).
	Version string `json:"version"`
	// Directory holds the copy (relative to the repository root).
	Directory string `json:"directory"`
}

// checkFrozen checks the crdsBefore entries: semver versions, a directory each, no version twice.
func (p *Package) checkFrozen() error {
	seen := map[string]bool{}
	for i, f := range p.CRDsBefore {
		if _, err := semver.Parse(f.Version); err != nil {
			return fmt.Errorf("crdsBefore[%d]: version %q: %w", i, f.Version, err)
		}
		if f.Directory == "" {
			return fmt.Errorf("crdsBefore[%d]: directory is required", i)
		}
		if p.CRDDirectory == "" {
			return fmt.Errorf("crdsBefore[%d]: the package owns no CRDs (crdDirectory is empty)", i)
		}
		if seen[f.Version] {
			return fmt.Errorf("crdsBefore[%d]: version %s named twice", i, f.Version)
		}
		seen[f.Version] = true
	}
	return nil
}

// crdDirectoryFor is the directory the CRDs of version are generated from: the copy of the first crdsBefore entry
// whose version is later than it, else crdDirectory. frozen says it is a copy.
func (p *Package) crdDirectoryFor(version string) (dir string, frozen bool) {
	entries := append([]FrozenCRDs(nil), p.CRDsBefore...)
	sort.Slice(entries, func(i, j int) bool {
		return semver.MustParse(entries[i].Version).LT(semver.MustParse(entries[j].Version))
	})
	v := semver.MustParse(version)
	for _, f := range entries {
		if v.LT(semver.MustParse(f.Version)) {
			return f.Directory, true
		}
	}
	return p.CRDDirectory, false
}

// crdsOf loads the CRDs version v ships (ship) and those it leaves out (leave: their RBAC rules and examples go
// too), from crdDirectory or the frozen copy crdsBefore names for v. The crdsSince and fieldsSince entries are
// always checked against crdDirectory, so a typo fails every version.
func (p *Package) crdsOf(root string, v Version) (ship, leave []crdFile, err error) {
	current, err := loadCRDs(root, p.CRDDirectory, v.PrinterColumns)
	if err != nil {
		return nil, nil, err
	}
	dir, frozen := p.crdDirectoryFor(v.Version)
	all := current
	if frozen {
		if all, err = loadCRDs(root, dir, v.PrinterColumns); err != nil {
			return nil, nil, err
		}
		// Checks only: the entries against the current CRDs, on copies of them.
		probe := make([]crdFile, len(current))
		for i, f := range current {
			probe[i] = crdFile{name: f.name, crd: f.crd.DeepCopy()}
		}
		if err := p.withoutLaterFields(probe, current, v.Version, false); err != nil {
			return nil, nil, err
		}
	}
	ship, leave, err = p.shipped(all, current, v.Version)
	if err != nil {
		return nil, nil, err
	}
	if err := p.withoutLaterFields(ship, current, v.Version, frozen); err != nil {
		return nil, nil, err
	}
	// What the copy lacks (CRDs added since) is left out like a CRD of a later version.
	inCopy := map[string]bool{}
	for _, f := range all {
		inCopy[f.crd.Name] = true
	}
	for _, f := range current {
		if !inCopy[f.crd.Name] {
			leave = append(leave, f)
		}
	}
	return ship, leave, nil
}
