package installer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
)

// Allowed are the rules, among those ALM refuses by default (policy.RuleWildcardRBAC, policy.RuleRBACEscalation,
// policy.RulePrivilegedBinding, policy.RuleAggregatedRole, policy.RulePrivilegedPod, policy.RuleWildcardWebhook),
// that an OperatorVersion may break.
type Allowed map[string]bool

// AllowedFrom reads the opt-in annotations operators.alm.dev/allow-<rule>: "true" of an object. The installer reads
// them only from objects a cluster admin controls (Installer.optIns): the Namespace a version installs in, and the
// CatalogSource it comes from when that is in ALM's namespace (for every package it serves); never from the AppType,
// a tenant's CatalogSource or the OperatorVersion.
func AllowedFrom(annotations map[string]string) Allowed {
	allowed := Allowed{}
	for k, v := range annotations {
		if rule, ok := strings.CutPrefix(k, policy.AnnotationAllowPrefix); ok && v == "true" {
			allowed[rule] = true
		}
	}
	return allowed
}

// CheckPolicy refuses, with an InvalidError naming the object, the field and the rule, a plan that grants `*` on
// `*` or privilege-escalating permissions (policy.EscalatingRule: escalate, bind or impersonate, spelled out or
// through `*`), binds a privileged role (cluster-admin, admin, edit, system:*), ships a ClusterRole with an
// aggregationRule or one that aggregates into admin, edit or view beyond the bundle's own kinds, runs privileged
// pods or registers a webhook on every resource, unless allowed; and one with a CRD in a group Kubernetes serves
// (never allowed). namespace is the AppType's, for the refusal's kubectl line.
func CheckPolicy(p *Plan, namespace string, allowed Allowed) error {
	for _, crd := range p.CRDs {
		if group, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); policy.IsBuiltinGroup(group) {
			return invalidf("CustomResourceDefinition %s: spec.group %q is served by Kubernetes itself (rule %s)", crd.GetName(), group, policy.RuleCRDBuiltinGroup)
		}
	}
	groups := map[string]bool{}
	for _, crd := range p.CRDs {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		groups[group] = true
	}
	for _, obj := range p.Objects {
		if err := checkObject(obj, groups, namespace, allowed); err != nil {
			return err
		}
	}
	return nil
}

// checkObject is CheckPolicy for one object of the plan; groups are the API groups of the plan's CRDs.
func checkObject(obj *unstructured.Unstructured, groups map[string]bool, namespace string, allowed Allowed) error {
	what := obj.GetKind() + " " + describe(obj)
	refused := func(rule, format string, args ...any) error { return refusal(namespace, rule, format, args...) }
	if i := policy.WildcardRole(obj); i >= 0 && !allowed[policy.RuleWildcardRBAC] {
		return refused(policy.RuleWildcardRBAC, "%s: rules[%d] grants every verb on every resource of every API group", what, i)
	}
	if i, verbs := policy.EscalatingRole(obj); verbs != "" && !allowed[policy.RuleRBACEscalation] {
		return refused(policy.RuleRBACEscalation, "%s: rules[%d] grants the privilege-escalating verbs %s", what, i, verbs)
	}
	if policy.AggregatedRole(obj) && !allowed[policy.RuleAggregatedRole] {
		return refused(policy.RuleAggregatedRole, "%s: aggregationRule gathers the rules of every ClusterRole its selectors match, "+
			"now and later, whatever the bundle grants", what)
	}
	if label, i := policy.AggregatesBeyond(obj, groups); label != "" && !allowed[policy.RuleAggregateToUserRoles] {
		return refused(policy.RuleAggregateToUserRoles, "%s: label %s adds rules[%d], which reaches beyond the custom resources "+
			"the bundle ships, to everyone bound to that role (e.g. every namespace's admins, editors or viewers)", what, label, i)
	}
	if w := wildcardWebhook(obj); w != "" && !allowed[policy.RuleWildcardWebhook] {
		return refused(policy.RuleWildcardWebhook, "%s: %s intercepts every resource of every API group with failurePolicy Fail", what, w)
	}
	if role := policy.PrivilegedBinding(obj); role != "" && !allowed[policy.RulePrivilegedBinding] {
		return refused(policy.RulePrivilegedBinding, "%s: roleRef binds %s", what, role)
	}
	if obj.GetKind() == "Deployment" && !allowed[policy.RulePrivilegedPod] {
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
			return invalidf("%s: %v", what, err)
		}
		if why := policy.PrivilegedPod(&d.Spec.Template.Spec); why != "" {
			return refused(policy.RulePrivilegedPod, "%s: spec.template.spec runs %s", what, why)
		}
	}
	return nil
}

// refusal is the InvalidError of a rule an admin may lift: it says where the opt-in goes. Only a cluster admin's
// objects count: an annotation on the AppType or on a tenant's CatalogSource allows nothing.
func refusal(namespace, rule, format string, args ...any) error {
	return invalidf("%s (rule %s); a cluster admin allows it with the annotation %s%s: \"true\" on the Namespace "+
		"(kubectl annotate namespace %s %s%s=true), or on a CatalogSource in ALM's namespace for every package it "+
		"serves; the AppType's and a tenant CatalogSource's annotations do not count",
		fmt.Sprintf(format, args...), rule, policy.AnnotationAllowPrefix, rule, namespace, policy.AnnotationAllowPrefix, rule)
}

// policy checks the hostile-input policy on content's plan (CheckPolicy) with the opt-ins of a cluster admin's
// objects, read only when the plan breaks a rule (the common install costs no request for them).
func (in *Installer) policy(ctx context.Context, content *operatorsv1alpha1.OperatorVersion, plan *Plan) error {
	err := CheckPolicy(plan, content.Namespace, nil)
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		return err
	}
	allowed, err := in.optIns(ctx, content)
	if err != nil {
		return err
	}
	return CheckPolicy(plan, content.Namespace, allowed)
}

// optIns are the rules a cluster admin allows for ov: the opt-ins of ov's Namespace, read from the API server (ALM's
// cache holds only trusted namespaces; tenants must not get update on their Namespace, as for the trusted-installs
// label), and of the CatalogSource ov comes from (spec.source) when it is in ALM's namespace, where only admins
// write, read from the cache. The AppType's and any other CatalogSource's annotations count for nothing.
func (in *Installer) optIns(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) (Allowed, error) {
	ns := &corev1.Namespace{}
	if err := in.Reader.Get(ctx, client.ObjectKey{Name: ov.Namespace}, ns); err != nil {
		return nil, fmt.Errorf("OperatorVersion %s: reading the opt-ins (%s*) of Namespace %s: %w", klog.KObj(ov), policy.AnnotationAllowPrefix, ov.Namespace, err)
	}
	allowed := AllowedFrom(ns.Annotations)
	src := ov.Spec.Source
	if src == nil || in.Access == nil || src.Namespace == "" || src.Namespace != in.Access.Policy.Namespace {
		return allowed, nil
	}
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := in.Client.Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name}, cs); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("OperatorVersion %s: reading the opt-ins of CatalogSource %s/%s: %w", klog.KObj(ov), src.Namespace, src.Name, err)
	}
	for rule := range AllowedFrom(cs.Annotations) {
		allowed[rule] = true
	}
	return allowed, nil
}
