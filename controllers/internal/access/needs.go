package access

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Request is one access review: a verb on a resource (Group, Resource, Subresource, optionally Name) in Namespace
// ("" cluster-wide), or on a non-resource URL (Path).
type Request struct {
	Namespace, Verb, Group, Resource, Subresource, Name, Path string
}

// CanI is the kubectl command that asks the same question for user.
func (r Request) CanI(user string) string {
	if r.Path != "" {
		return fmt.Sprintf("kubectl auth can-i %s %s --as %s", r.Verb, r.Path, user)
	}
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Name != "" {
		res += "/" + r.Name
	}
	out := "kubectl auth can-i " + r.Verb + " " + res
	if r.Subresource != "" {
		out += " --subresource " + r.Subresource
	}
	if r.Namespace != "" {
		out += " -n " + r.Namespace
	}
	return out + " --as " + user
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

// Needs lists what the identity needs to install objects, as Kubernetes' RBAC authorizer and escalation check would
// ask it: create and update on every object, and for RBAC the permissions a role grants (or escalate on roles) and
// that a binding grants (or bind on the role it references). A binding to a role that is not among objects needs
// bind on that role. It is pure apart from resource.
func Needs(objects []*unstructured.Unstructured, resource Resource) ([]Need, error) {
	rules := map[string][]rbacv1.PolicyRule{} // "Role/ns/name" or "ClusterRole//name" -> rules
	for _, obj := range objects {
		if obj.GroupVersionKind().Group != rbacGroup || (obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole") {
			continue
		}
		role := &rbacv1.ClusterRole{} // a Role has the same rules field
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
			return nil, fmt.Errorf("%s %s: rules: %w", obj.GetKind(), obj.GetName(), err)
		}
		rules[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] = role.Rules
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
			out = append(out, Need{For: gvk.Kind + " " + qualified(ns, name) + " grants it",
				Requests:    ruleRequests(rules[gvk.Kind+"/"+ns+"/"+name], ns),
				Alternative: &Request{Namespace: ns, Verb: "escalate", Group: rbacGroup, Resource: strings.ToLower(gvk.Kind) + "s"}})
		case "RoleBinding", "ClusterRoleBinding":
			n, err := bindingNeed(obj, rules)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// bindingNeed is what a RoleBinding or ClusterRoleBinding requires: bind on the role it references, or the role's
// permissions in the binding's scope.
func bindingNeed(obj *unstructured.Unstructured, rules map[string][]rbacv1.PolicyRule) (Need, error) {
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
	granted, ok := rules[b.RoleRef.Kind+"/"+roleNS+"/"+b.RoleRef.Name]
	if !ok {
		n.Requests = []Request{bind} // a role ALM does not install: only bind says the identity may grant it
		return n, nil
	}
	n.Requests, n.Alternative = ruleRequests(granted, ns), &bind
	return n, nil
}

// ruleRequests expands rules into one request per verb, API group, resource (and subresource) and resource name, or
// per verb and non-resource URL, in namespace ("" cluster-wide).
func ruleRequests(rules []rbacv1.PolicyRule, namespace string) []Request {
	var out []Request
	for _, rule := range rules {
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, verb := range rule.Verbs {
			for _, path := range rule.NonResourceURLs {
				out = append(out, Request{Verb: verb, Path: path})
			}
			for _, group := range rule.APIGroups {
				for _, res := range rule.Resources {
					resource, sub, _ := strings.Cut(res, "/")
					for _, name := range names {
						out = append(out, Request{Namespace: namespace, Verb: verb, Group: group, Resource: resource, Subresource: sub, Name: name})
					}
				}
			}
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
