package bundlediff

import (
	"fmt"
	"strings"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/crdsafety"
	"github.com/almproject/alm/catalog/policy"
)

const kindCRD = "CustomResourceDefinition"

// diffCRDs compares the CRDs of two bundles. A changed CRD carries the upgrade-safety verdict the installer applies
// (crdsafety.UpdateSafe) for the objects stored in the older bundle's storage version: Refused says why the update
// is unsafe. Existing objects are validated against the new schema at install time, which a preview cannot do.
func diffCRDs(older, newer []*apiextv1.CustomResourceDefinition) []almv1alpha1.PreviewChange {
	before := map[string]*apiextv1.CustomResourceDefinition{}
	for _, c := range older {
		before[c.Name] = c
	}
	var out []almv1alpha1.PreviewChange
	seen := map[string]bool{}
	for _, n := range newer {
		seen[n.Name] = true
		o, ok := before[n.Name]
		switch {
		case !ok:
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeAdded, Kind: kindCRD, Name: n.Name,
				Detail: Clip("versions " + versionList(n))})
		case !equality.Semantic.DeepEqual(o.Spec, n.Spec):
			out = append(out, crdChange(o, n))
		}
	}
	for _, o := range older {
		if !seen[o.Name] {
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeRemoved, Kind: kindCRD, Name: o.Name,
				Detail: "no longer in the bundle; ALM never deletes a CRD: it and its objects stay"})
		}
	}
	return out
}

// crdChange describes how a CRD changes, with the safety verdict.
func crdChange(o, n *apiextv1.CustomResourceDefinition) almv1alpha1.PreviewChange {
	c := almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeChanged, Kind: kindCRD, Name: n.Name}
	var parts []string
	if versionList(o) != versionList(n) {
		parts = append(parts, fmt.Sprintf("versions %s -> %s", versionList(o), versionList(n)))
	}
	ov := map[string]apiextv1.CustomResourceDefinitionVersion{}
	for _, v := range o.Spec.Versions {
		ov[v.Name] = v
	}
	for _, v := range n.Spec.Versions {
		old, ok := ov[v.Name]
		if !ok {
			continue
		}
		if !equality.Semantic.DeepEqual(old.Schema, v.Schema) {
			parts = append(parts, "schema of "+v.Name)
		}
		if !equality.Semantic.DeepEqual(old.AdditionalPrinterColumns, v.AdditionalPrinterColumns) {
			parts = append(parts, "printer columns of "+v.Name)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "other fields of the spec")
	}
	existing := o.DeepCopy()
	existing.Status.StoredVersions = storageVersions(o)
	if err := crdsafety.UpdateSafe(existing, n, nil); err != nil {
		c.Refused = Clip(err.Error())
		parts = append(parts, "unsafe")
	} else {
		parts = append(parts, "safe: keeps stored version "+strings.Join(existing.Status.StoredVersions, ", "))
	}
	c.Detail = Clip(strings.Join(parts, "; "))
	return c
}

// versionList lists a CRD's versions, marking the storage version and those not served.
func versionList(c *apiextv1.CustomResourceDefinition) string {
	var out []string
	for _, v := range c.Spec.Versions {
		s := v.Name
		if v.Storage {
			s += " (storage)"
		}
		if !v.Served {
			s += " (not served)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// storageVersions are the versions a cluster running the older bundle stores objects in.
func storageVersions(c *apiextv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range c.Spec.Versions {
		if v.Storage {
			out = append(out, v.Name)
		}
	}
	return out
}

// diffWebhooks compares the webhook definitions of two ClusterServiceVersions by generateName; an added or
// changed admission webhook that intercepts every resource while failing closed is refused by default.
func diffWebhooks(older, newer *opv1alpha1.ClusterServiceVersion) []almv1alpha1.PreviewChange {
	before, after := webhooksOf(older), webhooksOf(newer)
	var out []almv1alpha1.PreviewChange
	for _, name := range unionKeys(before, after) {
		o, inOld := before[name]
		n, inNew := after[name]
		c := almv1alpha1.PreviewChange{Name: name, Kind: string(n.Type)}
		switch {
		case !inOld:
			c.Op, c.Detail = almv1alpha1.ChangeAdded, webhookDetail(n)
		case !inNew:
			c.Op, c.Kind, c.Detail = almv1alpha1.ChangeRemoved, string(o.Type), webhookDetail(o)
		case !equality.Semantic.DeepEqual(o, n):
			c.Op, c.Detail = almv1alpha1.ChangeChanged, webhookDetail(n)
		default:
			continue
		}
		if inNew {
			if i, ok := policy.WildcardWebhook(n); ok {
				c.Refused = fmt.Sprintf("%s: rules[%d] intercepts every resource of every API group with failurePolicy Fail; %s",
					policy.RuleWildcardWebhook, i, policy.OptInHint(policy.RuleWildcardWebhook))
			}
		}
		out = append(out, c)
	}
	return out
}

func webhooksOf(csv *opv1alpha1.ClusterServiceVersion) map[string]opv1alpha1.WebhookDescription {
	out := map[string]opv1alpha1.WebhookDescription{}
	if csv != nil {
		for _, w := range csv.Spec.WebhookDefinitions {
			out[w.GenerateName] = w
		}
	}
	return out
}

func webhookDetail(w opv1alpha1.WebhookDescription) string {
	path := ""
	if w.WebhookPath != nil {
		path = *w.WebhookPath
	}
	if w.Type == opv1alpha1.ConversionWebhook {
		return Clip(fmt.Sprintf("served by Deployment %s at %s, converts %s", w.DeploymentName, path, strings.Join(w.ConversionCRDs, ", ")))
	}
	var rules []string
	for _, r := range w.Rules {
		var ops []string
		for _, op := range r.Operations {
			ops = append(ops, string(op))
		}
		rules = append(rules, strings.Join(ops, ",")+" "+strings.Join(r.Resources, ","))
	}
	return Clip(fmt.Sprintf("served by Deployment %s at %s, rules %s", w.DeploymentName, path, strings.Join(rules, "; ")))
}
