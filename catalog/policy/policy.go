// Package policy is the hostile-input policy that the catalog and the installer share: pure predicates on what a
// bundle asks for (CRDs in Kubernetes' own groups, wildcard or privilege-escalating RBAC, bindings to
// cluster-admin, privileged pods), the rules and opt-in annotations of what ALM refuses by default, and the one
// list of bundle object kinds ALM installs.
package policy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Rules of the checks on hostile input that both the catalog and the installer enforce (see "Hostile inputs" in the
// README). The installer refuses all but RuleCRDBuiltinGroup only unless the AppType or its CatalogSource opts in.
const (
	// RuleCRDBuiltinGroup: a CRD in a group Kubernetes serves.
	RuleCRDBuiltinGroup = "crd-builtin-group"
	// RuleWildcardRBAC: `*` verbs on `*` resources of `*` groups.
	RuleWildcardRBAC = "wildcard-rbac"
	// RuleRBACEscalation: the verbs escalate, bind or impersonate.
	RuleRBACEscalation = "rbac-escalation"
	// RuleClusterAdmin: a binding to the ClusterRole cluster-admin.
	RuleClusterAdmin = "cluster-admin-binding"
	// RulePrivilegedPod: a pod template that runs privileged.
	RulePrivilegedPod = "privileged-pod"
)

// builtinGroups are the API groups Kubernetes serves itself; a CRD must never define a kind in one of them.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
	"internal.apiserver.k8s.io": true, "networking.k8s.io": true, "node.k8s.io": true, "rbac.authorization.k8s.io": true,
	"resource.k8s.io": true, "scheduling.k8s.io": true, "storage.k8s.io": true, "storagemigration.k8s.io": true,
	"metrics.k8s.io": true,
}

// IsBuiltinGroup reports whether group is served by Kubernetes itself.
func IsBuiltinGroup(group string) bool { return builtinGroups[group] }

// WildcardRule reports whether a policy rule grants every verb on every resource of every API group.
func WildcardRule(r rbacv1.PolicyRule) bool {
	has := func(list []string) bool {
		for _, s := range list {
			if s == rbacv1.VerbAll {
				return true
			}
		}
		return false
	}
	return has(r.Verbs) && has(r.Resources) && has(r.APIGroups)
}

// escalationVerbs are the RBAC verbs that let their holder gain permissions it was not given: escalate (create or
// update a role with more than one holds), bind (bind a role one does not hold) and impersonate (act as another
// user, group or ServiceAccount).
var escalationVerbs = []string{"escalate", "bind", "impersonate"}

// EscalatingRule names the privilege-escalating verbs a policy rule grants explicitly (a rule granting `*` on `*` is
// the wildcard rule's); empty when it grants none.
func EscalatingRule(r rbacv1.PolicyRule) string {
	if WildcardRule(r) {
		return ""
	}
	var verbs []string
	for _, v := range r.Verbs {
		for _, e := range escalationVerbs {
			if strings.EqualFold(v, e) {
				verbs = append(verbs, e)
			}
		}
	}
	return strings.Join(verbs, ", ")
}

// OptInHint is the hint of a rule the installer refuses unless the AppType or its CatalogSource carries its opt-in
// annotation.
func OptInHint(rule string) string {
	return fmt.Sprintf("ALM refuses to install it unless the AppType or its CatalogSource is annotated %s%s: \"true\"", AnnotationAllowPrefix, rule)
}

// AnnotationAllowPrefix prefixes the AppType and CatalogSource annotations that allow what ALM refuses by default
// (operators.alm.dev/allow-wildcard-rbac, -rbac-escalation, -cluster-admin-binding, -privileged-pod).
const AnnotationAllowPrefix = "operators.alm.dev/allow-"

// BindsClusterAdmin reports whether obj is a RoleBinding or ClusterRoleBinding to the ClusterRole cluster-admin.
func BindsClusterAdmin(obj *unstructured.Unstructured) bool {
	if obj.GroupVersionKind().Group != rbacv1.GroupName || (obj.GetKind() != "RoleBinding" && obj.GetKind() != "ClusterRoleBinding") {
		return false
	}
	kind, _, _ := unstructured.NestedString(obj.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name")
	return kind == "ClusterRole" && name == "cluster-admin"
}

// WildcardRole reports whether obj is a Role or ClusterRole with a rule granting `*` on `*`.
func WildcardRole(obj *unstructured.Unstructured) bool {
	if obj.GroupVersionKind().Group != rbacv1.GroupName || (obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole") {
		return false
	}
	var role rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
		return false
	}
	for _, r := range role.Rules {
		if WildcardRule(r) {
			return true
		}
	}
	return false
}

// EscalatingRole finds the first rule of a Role or ClusterRole that grants privilege-escalating verbs: its index and
// the verbs; "" when there is none.
func EscalatingRole(obj *unstructured.Unstructured) (int, string) {
	if obj.GroupVersionKind().Group != rbacv1.GroupName || (obj.GetKind() != "Role" && obj.GetKind() != "ClusterRole") {
		return -1, ""
	}
	var role rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
		return -1, ""
	}
	for i, r := range role.Rules {
		if verbs := EscalatingRule(r); verbs != "" {
			return i, verbs
		}
	}
	return -1, ""
}

// baselineCapabilities are the capabilities the Pod Security Standards' baseline profile lets a container add;
// adding any other (SYS_ADMIN, NET_ADMIN, ALL, ...) makes the pod privileged.
var baselineCapabilities = map[corev1.Capability]bool{
	"AUDIT_WRITE": true, "CHOWN": true, "DAC_OVERRIDE": true, "FOWNER": true, "FSETID": true, "KILL": true, "MKNOD": true,
	"NET_BIND_SERVICE": true, "SETFCAP": true, "SETGID": true, "SETPCAP": true, "SETUID": true, "SYS_CHROOT": true,
}

// PrivilegedPod describes what makes a pod template privileged (privileged containers, containers that allow
// privilege escalation or add capabilities beyond the baseline profile's, host namespaces, hostPath volumes), or ""
// when nothing does.
func PrivilegedPod(spec *corev1.PodSpec) string {
	var why []string
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		why = append(why, "host namespaces (hostNetwork, hostPID or hostIPC)")
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			why = append(why, fmt.Sprintf("hostPath volume %s (%s)", v.Name, v.HostPath.Path))
		}
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		why = append(why, privilegedContainer(c)...)
	}
	return strings.Join(why, ", ")
}

// privilegedContainer says what makes a container privileged.
func privilegedContainer(c corev1.Container) []string {
	sc := c.SecurityContext
	if sc == nil {
		return nil
	}
	var why []string
	if sc.Privileged != nil && *sc.Privileged {
		why = append(why, "privileged container "+c.Name)
	}
	if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
		why = append(why, "container "+c.Name+" with allowPrivilegeEscalation: true")
	}
	if sc.Capabilities != nil {
		var added []string
		for _, capability := range sc.Capabilities.Add {
			if !baselineCapabilities[corev1.Capability(strings.TrimPrefix(strings.ToUpper(string(capability)), "CAP_"))] {
				added = append(added, string(capability))
			}
		}
		if len(added) > 0 {
			why = append(why, fmt.Sprintf("container %s adding capabilities %s", c.Name, strings.Join(added, ", ")))
		}
	}
	return why
}
