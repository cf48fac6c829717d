// Package crdaccess is the CRD access loop. Before updating a CRD an OperatorVersion owns, the installer lists the
// CRD's objects to check that they stay valid (crdsafety.UpdateSafe). Kubernetes RBAC cannot grant "list every
// custom resource" without `*`, which ALM's least-privilege role does not use; instead this loop keeps the
// ClusterRole alm-manager-custom-resources (bound to ALM's ServiceAccount by config/rbac) granting list on exactly
// the resources of the CRDs that the OperatorVersions on the cluster ship and of the CRDs ALM created. It reacts to
// an OperatorVersion's creation, one whole install step before the installer can need the grant (the first step
// creates the CRDs), and to the creation of a CRD the requirements loop makes for a version still to come.
package crdaccess

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/internal/outage"
)

// ClusterRoleName is the ClusterRole the loop maintains; config/rbac binds it to ALM's ServiceAccount.
const ClusterRoleName = "alm-manager-custom-resources"

// Reconciler keeps ClusterRoleName's rules equal to Rules of every OperatorVersion.
type Reconciler struct {
	client.Client
	shipped shipped
}

// Reconcile recomputes the ClusterRole's rules from every OperatorVersion and writes them if they changed.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	// What the versions ship comes from the watch (shipped), not from reading and copying every OperatorVersion for
	// each reconcile: with thousands of versions installing, that was most of what ALM allocated (BenchmarkScale).
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.List(ctx, crds, client.HasLabels{operatorsv1alpha1.LabelAppType}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	rules := rulesFor(r.shipped.all(), crds.Items)
	role := &rbacv1.ClusterRole{}
	err := r.Get(ctx, client.ObjectKey{Name: ClusterRoleName}, role)
	if apierrors.IsNotFound(err) {
		role = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName,
			Labels: map[string]string{"app.kubernetes.io/name": "alm", "app.kubernetes.io/managed-by": "alm"}}, Rules: rules}
		if err := r.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("creating ClusterRole %s: %w", ClusterRoleName, err)
		}
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(role.Rules) == 0 && len(rules) == 0 || equality.Semantic.DeepEqual(role.Rules, rules) {
		return ctrl.Result{}, nil
	}
	role.Rules = rules
	if err := r.Update(ctx, role); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating ClusterRole %s: %w", ClusterRoleName, err)
	}
	return ctrl.Result{}, nil
}

// Rules grants list on the resources of every CRD in the versions' spec.objects and of the CRDs ALM created (they
// carry its labels; the requirements loop creates a CRD before the version that owns it exists), one rule per API
// group, sorted. CRDs in a group Kubernetes serves are left out: the installer refuses them (rule
// crd-builtin-group), and a bundle must not be able to widen ALM's access to built-in resources.
func Rules(versions []operatorsv1alpha1.OperatorVersion, labelled []apiextensionsv1.CustomResourceDefinition) []rbacv1.PolicyRule {
	shipped := make([][]groupResource, 0, len(versions))
	for i := range versions {
		shipped = append(shipped, shippedBy(&versions[i]))
	}
	return rulesFor(shipped, labelled)
}

// groupResource is a CRD's group and plural.
type groupResource struct{ group, plural string }

// shippedBy lists the CRDs in ov's spec.objects; none for a version without spec.bundle, whose content the
// lifecycle loops never apply (bundlecontent.Unrecorded): a version written by hand does not widen ALM's access.
func shippedBy(ov *operatorsv1alpha1.OperatorVersion) []groupResource {
	if ov.Spec.Bundle == nil {
		return nil
	}
	var out []groupResource
	for _, raw := range ov.Spec.Objects {
		var crd struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Spec       struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
				} `json:"names"`
			} `json:"spec"`
		}
		if json.Unmarshal(raw.Raw, &crd) != nil || crd.Kind != "CustomResourceDefinition" || crd.APIVersion != "apiextensions.k8s.io/v1" {
			continue
		}
		out = append(out, groupResource{group: crd.Spec.Group, plural: crd.Spec.Names.Plural})
	}
	return out
}

// rulesFor is Rules of the CRDs each version ships (shippedBy) and the labelled CRDs.
func rulesFor(shipped [][]groupResource, labelled []apiextensionsv1.CustomResourceDefinition) []rbacv1.PolicyRule {
	byGroup := map[string]map[string]bool{}
	add := func(group, plural string) {
		if group == "" || plural == "" || policy.IsBuiltinGroup(group) {
			return
		}
		if byGroup[group] == nil {
			byGroup[group] = map[string]bool{}
		}
		byGroup[group][plural] = true
	}
	for i := range labelled {
		add(labelled[i].Spec.Group, labelled[i].Spec.Names.Plural)
	}
	for _, grs := range shipped {
		for _, gr := range grs {
			add(gr.group, gr.plural)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	rules := make([]rbacv1.PolicyRule, 0, len(groups))
	for _, g := range groups {
		resources := make([]string, 0, len(byGroup[g]))
		for p := range byGroup[g] {
			resources = append(resources, p)
		}
		sort.Strings(resources)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: resources, Verbs: []string{"list"}})
	}
	return rules
}

// SetupWithManager registers the loop: any OperatorVersion created, deleted or whose spec changes, any
// ALM-labelled CRD created, deleted or changed, and any change to the ClusterRole itself (so an
// edit by someone else is undone), recomputes the one ClusterRole.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ClusterRoleName}}}
	})
	labelled := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := obj.GetLabels()[operatorsv1alpha1.LabelAppType]
		return ok
	})
	ours := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == ClusterRoleName })
	return ctrl.NewControllerManagedBy(mgr).Named("crdaccess").WithOptions(outage.Controller()).
		// Only a new, changed (spec) or deleted version can change the rules; status writes cannot.
		Watches(&operatorsv1alpha1.OperatorVersion{}, r.shipped.handler(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, one, builder.WithPredicates(labelled, predicate.GenerationChangedPredicate{})).
		Watches(&rbacv1.ClusterRole{}, one, builder.WithPredicates(ours)).
		Complete(r)
}
