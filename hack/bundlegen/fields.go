package bundlegen

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// Fields added to a published CRD: fieldsSince names them (<plural>.<group> -> field path in the schema of every
// served version, e.g. spec.adopt -> version) and the bundles of earlier versions leave them out of the schema, so
// a published bundle stays byte for byte what it was and never offers a field its operator does not honour.

// checkFieldsSince checks the fieldsSince entries: CRD names, dotted paths and semver versions.
func (p *Package) checkFieldsSince() error {
	for name, fields := range p.FieldsSince {
		if !strings.Contains(name, ".") {
			return fmt.Errorf("fieldsSince: %q is not a CRD name (<plural>.<group>)", name)
		}
		for path, v := range fields {
			if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") {
				return fmt.Errorf("fieldsSince[%s]: %q is not a field path (e.g. spec.adopt)", name, path)
			}
			if _, err := semver.Parse(v); err != nil {
				return fmt.Errorf("fieldsSince[%s][%s]: version %q: %w", name, path, v, err)
			}
		}
	}
	return nil
}

// withoutLaterFields removes from the CRDs the version ships the fields that later versions added. Every entry
// must name a CRD of the directory and a field of its schema (a typo would otherwise ship the field everywhere); a
// frozen copy (crdsBefore) may lack the CRDs and fields added later.
func (p *Package) withoutLaterFields(files []crdFile, all []crdFile, version string, frozen bool) error {
	known := map[string]bool{}
	for _, f := range all {
		known[f.crd.Name] = true
	}
	for name := range p.FieldsSince {
		if !known[name] && !frozen {
			return fmt.Errorf("fieldsSince: CRD %s is not in %s", name, p.CRDDirectory)
		}
	}
	v := semver.MustParse(version)
	for _, f := range files {
		for path, since := range p.FieldsSince[f.crd.Name] {
			for i := range f.crd.Spec.Versions {
				s := f.crd.Spec.Versions[i].Schema
				if s == nil || s.OpenAPIV3Schema == nil {
					continue
				}
				parent, last := s.OpenAPIV3Schema, path
				for {
					head, rest, more := strings.Cut(last, ".")
					if !more {
						break
					}
					child, ok := parent.Properties[head]
					if !ok && frozen {
						break
					}
					if !ok {
						return fmt.Errorf("fieldsSince[%s]: %s: no property %s", f.crd.Name, path, head)
					}
					// child is a copy, but its Properties is the CRD's own map: the removal below reaches the CRD.
					parent, last = &child, rest
				}
				if _, ok := parent.Properties[last]; !ok && frozen {
					continue
				} else if !ok {
					return fmt.Errorf("fieldsSince[%s]: %s: no property %s", f.crd.Name, path, last)
				}
				if v.LT(semver.MustParse(since)) {
					delete(parent.Properties, last)
				}
			}
		}
	}
	return nil
}
