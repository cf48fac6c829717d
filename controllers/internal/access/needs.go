package access

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/almproject/alm/catalog/policy"
)

// Request is one access review: a verb on a resource (Group, Resource, Subresource, optionally Name) in Namespace
// ("" cluster-wide), or on a non-resource URL (Path).
type Request struct {
	Namespace, Verb, Group, Resource, Subresource, Name, Path string
}

// CanI is the kubectl command that asks the same question for user; a `*` is quoted for the shell.
func (r Request) CanI(user string) string {
	if r.Path != "" {
		return fmt.Sprintf("kubectl auth can-i %s %s --as %s", shellWord(r.Verb), shellWord(r.Path), user)
	}
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Name != "" {
		res += "/" + r.Name
	}
	out := "kubectl auth can-i " + shellWord(r.Verb) + " " + shellWord(res)
	if r.Subresource != "" {
		out += " --subresource " + shellWord(r.Subresource)
	}
	if r.Namespace != "" {
		out += " -n " + r.Namespace
	}
	return out + " --as " + user
}

// shellWord quotes a word holding `*`, which a shell would expand.
func shellWord(s string) string {
	if strings.Contains(s, "*") {
		return "'" + s + "'"
	}
	return s
}

// Need is what one object of an install requires of the identity it installs as: every Request, unless the
// Alternative is allowed (escalate on roles to write a role with permissions one does not hold, bind on a role to
// bind it). For names the object and why, for the message.
type Need struct {
	For         string
	Requests    []Request
	Alternative *Request
}

const rbacGroup = rbacv1.GroupName

// role is what Needs knows of a Role or ClusterRole the install ships.
type role struct {
	rules      []rbacv1.PolicyRule
	aggregates bool // a ClusterRole whose aggregationRule selects anything: its eventual rules are unknown
}

// Needs lists what the identity needs to install objects, as Kubernetes' RBAC authorizer and its escalation rules
// (the policy-based Role, ClusterRole and binding storage of pkg/registry/rbac) would ask it: create and update on
// every object; for a Role or ClusterRole, escalate on it, or every permission it grants in its scope, and for a
// ClusterRole with an aggregationRule also every permission there is (policy.FullAuthority: it can gather anything);
// for a binding, bind on the role it references, or the role's permissions in the binding's scope — every permission
// there is when the role aggregates, and bind only for a role the install does not ship. Rules are broken down as
// Kubernetes' comparator does (validation.BreakdownRule) into one request each. It is pure apart from resource.
func Needs(objects []*unstructured.Unstructured, resource Resource) ([]Need, error) {
	roles := map[string]role{} // "Role/ns/name" or "ClusterRole//name"
	for _, obj := range objects {
		if obj.GroupVersionKind().Group != rbacGroup || (obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole") {
			continue
		}
		r := &rbacv1.ClusterRole{} // a Role has the same rules field
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, r); err != nil {
			return nil, fmt.Errorf("%s %s: rules: %w", obj.GetKind(), obj.GetName(), err)
		}
		aggregates := obj.GetKind() == "ClusterRole" && r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
		roles[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] = role{rules: r.Rules, aggregates: aggregates}
	}
	var out []Need
	for _, obj := range objects {
		gvk := obj.GroupVersionKind()
		res, err := resource(gvk)
		if err != nil {
			return nil, fmt.Errorf("%s %s: resource of %s: %w", gvk.Kind, obj.GetName(), gvk, err)
		}
		ns, name := obj.GetNamespace(), obj.GetName()
		out = append(out, Need{For: gvk.Kind + " " + qualified(ns, name), Requests: []Request{
			{Namespace: ns, Verb: "create", Group: gvk.Group, Resource: res},
			{Namespace: ns, Verb: "update", Group: gvk.Group, Resource: res, Name: name},
		}})
		if gvk.Group != rbacGroup {
			continue
		}
		switch gvk.Kind {
		case "Role", "ClusterRole":
			out = append(out, roleNeeds(gvk.Kind, ns, name, roles[gvk.Kind+"/"+ns+"/"+name])...)
		case "RoleBinding", "ClusterRoleBinding":
			n, err := bindingNeed(obj, roles)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// roleNeeds is what writing a Role or ClusterRole requires besides create and update: escalate on it, or its rules in
// its scope and, when it aggregates, every permission there is ("must have cluster-admin privileges to use the
// aggregationRule").
func roleNeeds(kind, ns, name string, r role) []Need {
	escalate := &Request{Namespace: ns, Verb: "escalate", Group: rbacGroup, Resource: strings.ToLower(kind) + "s"}
	out := []Need{{For: kind + " " + qualified(ns, name) + " grants it", Requests: ruleRequests(r.rules, ns), Alternative: escalate}}
	if r.aggregates {
		out = append(out, Need{For: kind + " " + name + " has an aggregationRule, which can gather any permission: Kubernetes " +
			"lets only holders of every permission write one", Requests: ruleRequests(policy.FullAuthority, ""), Alternative: escalate})
	}
	return out
}

// bindingNeed is what a RoleBinding or ClusterRoleBinding requires: bind on the role it references, or the role's
// permissions in the binding's scope (every permission when the role aggregates).
func bindingNeed(obj *unstructured.Unstructured, roles map[string]role) (Need, error) {
	b := &rbacv1.RoleBinding{} // a ClusterRoleBinding has the same roleRef field
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, b); err != nil {
		return Need{}, fmt.Errorf("%s %s: roleRef: %w", obj.GetKind(), obj.GetName(), err)
	}
	ns := obj.GetNamespace()
	roleNS := ns
	if b.RoleRef.Kind == "ClusterRole" {
		roleNS = ""
	}
	bind := Request{Namespace: ns, Verb: "bind", Group: rbacGroup, Resource: strings.ToLower(b.RoleRef.Kind) + "s", Name: b.RoleRef.Name}
	n := Need{For: fmt.Sprintf("%s %s grants %s %s", obj.GetKind(), qualified(ns, obj.GetName()), b.RoleRef.Kind, b.RoleRef.Name)}
	r, ok := roles[b.RoleRef.Kind+"/"+roleNS+"/"+b.RoleRef.Name]
	switch {
	case !ok:
		n.Requests = []Request{bind} // a role ALM does not install: only bind says the identity may grant it
	case r.aggregates:
		n.For += ", whose aggregationRule can gather any permission"
		n.Requests, n.Alternative = ruleRequests(policy.FullAuthority, ns), &bind
	default:
		n.Requests, n.Alternative = ruleRequests(r.rules, ns), &bind
	}
	return n, nil
}

// ruleRequests breaks rules down as Kubernetes' comparator does (validation.BreakdownRule: one verb, API group,
// resource and resource name, or one verb and non-resource URL, each) into one request each, in namespace (""
// cluster-wide; non-resource URLs are always cluster-wide). `*` stays `*`: the authorizer matches a requested `*`
// only by a rule granting `*`, as validation.Covers does.
func ruleRequests(rules []rbacv1.PolicyRule, namespace string) []Request {
	var out []Request
	for _, rule := range rules {
		for _, part := range validation.BreakdownRule(rule) {
			if len(part.NonResourceURLs) > 0 {
				out = append(out, Request{Verb: part.Verbs[0], Path: part.NonResourceURLs[0]})
				continue
			}
			resource, sub, _ := strings.Cut(part.Resources[0], "/")
			req := Request{Namespace: namespace, Verb: part.Verbs[0], Group: part.APIGroups[0], Resource: resource, Subresource: sub}
			if len(part.ResourceNames) > 0 {
				req.Name = part.ResourceNames[0]
			}
			out = append(out, req)
		}
	}
	return out
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
