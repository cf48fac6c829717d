package bundlegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A published bundle never changes. A CRD added to a package's crdDirectory after some versions were published is
// therefore named in the input's crdsSince with the first version that ships it: the bundles of earlier versions
// leave out the CRD, the RBAC rules on its resources and its examples, and stay byte for byte what was published.

// checkSince checks the crdsSince entries: CRD names and semver versions.
func (p *Package) checkSince() error {
	for name, v := range p.CRDsSince {
		if !strings.Contains(name, ".") {
			return fmt.Errorf("crdsSince: %q is not a CRD name (<plural>.<group>)", name)
		}
		if _, err := semver.Parse(v); err != nil {
			return fmt.Errorf("crdsSince[%s]: version %q: %w", name, v, err)
		}
	}
	return nil
}

// Ships says whether the bundle of version ships the CRD name: every CRD does, except one named in crdsSince with
// a later version.
func (p *Package) Ships(name, version string) bool {
	since, ok := p.CRDsSince[name]
	if !ok {
		return true
	}
	return semver.MustParse(version).GTE(semver.MustParse(since))
}

// shipped splits the CRD files into those the version ships and those it leaves out. Every crdsSince entry must
// name a CRD of the directory, known (a typo would otherwise ship the CRD in every version).
func (p *Package) shipped(files, known []crdFile, version string) (ship, leave []crdFile, err error) {
	names := map[string]bool{}
	for _, f := range known {
		names[f.crd.Name] = true
	}
	for _, f := range files {
		if p.Ships(f.crd.Name, version) {
			ship = append(ship, f)
		} else {
			leave = append(leave, f)
		}
	}
	for name := range p.CRDsSince {
		if !names[name] {
			return nil, nil, fmt.Errorf("crdsSince: CRD %s is not in %s", name, p.CRDDirectory)
		}
	}
	return ship, leave, nil
}

// withoutResources removes from rules the resources (and their subresources) of the CRDs left out; a rule left
// with no resources goes. Rules on other groups, and non-resource rules, are kept as they are.
func withoutResources(rules []rbacv1.PolicyRule, leave []crdFile) []rbacv1.PolicyRule {
	if len(leave) == 0 {
		return rules
	}
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		if len(r.Resources) == 0 {
			out = append(out, r)
			continue
		}
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool {
			return slices.ContainsFunc(leave, func(f crdFile) bool { return ruleCovers(r, f.crd, res) })
		})
		if len(r.Resources) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// ruleCovers says whether resource res of rule r is crd's resource or one of its subresources.
func ruleCovers(r rbacv1.PolicyRule, crd *apiextv1.CustomResourceDefinition, res string) bool {
	plural := crd.Spec.Names.Plural
	return slices.Contains(r.APIGroups, crd.Spec.Group) && (res == plural || strings.HasPrefix(res, plural+"/"))
}

// withoutExamples removes the examples of the kinds of the CRDs left out.
func withoutExamples(examples []map[string]any, leave []crdFile) []map[string]any {
	if len(leave) == 0 {
		return examples
	}
	return slices.DeleteFunc(slices.Clone(examples), func(ex map[string]any) bool {
		apiVersion, _ := ex["apiVersion"].(string)
		kind, _ := ex["kind"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		return err == nil && slices.ContainsFunc(leave, func(f crdFile) bool {
			return f.crd.Spec.Group == gv.Group && f.crd.Spec.Names.Kind == kind
		})
	})
}
