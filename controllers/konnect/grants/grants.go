// Package grants decides whether a reference into another namespace is allowed: only where a KongReferenceGrant in
// the referenced object's namespace allows the referrer's kind from the referrer's namespace (Kong's operator's
// rule). A reference inside one namespace needs no grant.
package grants

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

// CoreGroup is how a grant names the core API group (of Secrets), as in Kong's operator: a grant's group cannot be
// empty.
const CoreGroup = "core"

// From is the object that holds a reference: its group, kind and namespace ("" when it is cluster-scoped).
type From struct {
	Group, Kind, Namespace string
}

// To is the object a reference names.
type To struct {
	Group, Kind, Namespace, Name string
}

// Allows says whether grant lets from reference to (the grant is in to's namespace).
func Allows(grant *configurationv1alpha1.KongReferenceGrant, from From, to To) bool {
	if grant.Namespace != to.Namespace {
		return false
	}
	fromOK := false
	for _, f := range grant.Spec.From {
		if f.Group == from.Group && f.Kind == from.Kind && f.Namespace == from.Namespace {
			fromOK = true
			break
		}
	}
	if !fromOK {
		return false
	}
	for _, t := range grant.Spec.To {
		if t.Group == to.Group && t.Kind == to.Kind && (t.Name == nil || *t.Name == to.Name) {
			return true
		}
	}
	return false
}

// Check says whether from may reference to. A reference inside one namespace always may; one into another
// namespace only when a KongReferenceGrant there allows it. denied is a message naming the grant that is missing
// ("" when allowed). c reads the operator's cache, which does not fail transiently: grants that cannot be read
// (their CRD is not installed, or the operator does not watch to's namespace) allow nothing, and the message says so.
func Check(ctx context.Context, c client.Reader, from From, to To) (denied string) {
	if from.Namespace == to.Namespace {
		return ""
	}
	list := &configurationv1alpha1.KongReferenceGrantList{}
	if err := c.List(ctx, list, client.InNamespace(to.Namespace)); err != nil {
		why := err.Error()
		if apimeta.IsNoMatchError(err) {
			why = "the KongReferenceGrant CRD is not installed"
		}
		return Missing(from, to) + "; the grants of namespace " + to.Namespace + " cannot be read (" + why +
			"; does the operator watch that namespace?)"
	}
	for i := range list.Items {
		if Allows(&list.Items[i], from, to) {
			return ""
		}
	}
	return Missing(from, to)
}

// Missing names the grant a reference lacks.
func Missing(from From, to To) string {
	ns := from.Namespace
	if ns == "" {
		ns = `"" (cluster-scoped)`
	}
	return fmt.Sprintf("no KongReferenceGrant in namespace %s allows %s %s from namespace %s to %s %s/%s (a grant there with from {group: %s, kind: %s, namespace: %s} and to {group: %s, kind: %s} would)",
		to.Namespace, from.Group, from.Kind, ns, to.Kind, to.Namespace, to.Name, from.Group, from.Kind, ns, to.Group, to.Kind)
}

// Namespaces are the namespaces from which grant lets objects of kind (in group) reference: the objects to
// reconcile when the grant changes. "" stands for cluster-scoped objects.
func Namespaces(grant *configurationv1alpha1.KongReferenceGrant, group, kind string) []string {
	var out []string
	for _, f := range grant.Spec.From {
		if f.Group == group && f.Kind == kind {
			out = append(out, f.Namespace)
		}
	}
	return out
}
