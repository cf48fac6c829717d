package catalog

import (
	"fmt"
	"strings"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Rules of the checks on hostile input (see "Hostile inputs" in the README).
const (
	RuleIrregularFile   = "irregular-file"
	RuleCRDBuiltinGroup = "crd-builtin-group"
	RuleWildcardRBAC    = "wildcard-rbac"
	RuleRBACEscalation  = "rbac-escalation"
	RuleClusterAdmin    = "cluster-admin-binding"
	RulePrivilegedPod   = "privileged-pod"
	RuleOtherNamespace  = "other-namespace"
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

// builtinGroupCRDs refuses CRDs in a group Kubernetes serves (even with api-approved.kubernetes.io).
func builtinGroupCRDs(crds []*apiextv1.CustomResourceDefinition, file func(i int) string) []Problem {
	var problems []Problem
	for i, crd := range crds {
		if IsBuiltinGroup(crd.Spec.Group) {
			problems = append(problems, errorf(file(i), RuleCRDBuiltinGroup, "define the kind in a group of your own domain",
				"CustomResourceDefinition %s: spec.group %q is served by Kubernetes itself", crd.Name, crd.Spec.Group))
		}
	}
	return problems
}

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

// wildcardPermissions warns about CSV permissions that grant `*` on `*` or privilege-escalating verbs: the
// installer refuses them unless the AppType or its CatalogSource opts in.
func wildcardPermissions(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, f := range []struct {
		field string
		perms []opv1alpha1.StrategyDeploymentPermissions
	}{{"permissions", spec.Permissions}, {"clusterPermissions", spec.ClusterPermissions}} {
		for i, perm := range f.perms {
			for j, r := range perm.Rules {
				if WildcardRule(r) {
					problems = append(problems, warnf(file, RuleWildcardRBAC, OptInHint(RuleWildcardRBAC),
						"ClusterServiceVersion %s: spec.install.spec.%s[%d].rules[%d] grants every verb on every resource of every API group",
						csv.Name, f.field, i, j))
				}
				if verbs := EscalatingRule(r); verbs != "" {
					problems = append(problems, warnf(file, RuleRBACEscalation, OptInHint(RuleRBACEscalation),
						"ClusterServiceVersion %s: spec.install.spec.%s[%d].rules[%d] grants the privilege-escalating verbs %s",
						csv.Name, f.field, i, j, verbs))
				}
			}
		}
	}
	return problems
}

// OptInHint is the hint of a rule the installer refuses unless the AppType or its CatalogSource carries its opt-in
// annotation.
func OptInHint(rule string) string {
	return fmt.Sprintf("ALM refuses to install it unless the AppType or its CatalogSource is annotated %s%s: \"true\"", AnnotationAllowPrefix, rule)
}

// AnnotationAllowPrefix prefixes the AppType and CatalogSource annotations that allow what ALM refuses by default
// (operators.alm.dev/allow-wildcard-rbac, -rbac-escalation, -cluster-admin-binding, -privileged-pod).
const AnnotationAllowPrefix = "operators.alm.dev/allow-"

// objectChecks looks at the bundle's other objects: bindings to cluster-admin, wildcard Roles, and objects that
// name a namespace (ALM installs them in the AppType's namespace).
func objectChecks(objects []*unstructured.Unstructured, file func(i int) string) []Problem {
	var problems []Problem
	for i, obj := range objects {
		what := obj.GetKind() + " " + obj.GetName()
		if ns := obj.GetNamespace(); ns != "" {
			problems = append(problems, warnf(file(i), RuleOtherNamespace, "leave metadata.namespace out of bundle objects",
				"%s: metadata.namespace %q is ignored; ALM installs the object in the AppType's namespace", what, ns))
		}
		if BindsClusterAdmin(obj) {
			problems = append(problems, warnf(file(i), RuleClusterAdmin, OptInHint(RuleClusterAdmin),
				"%s: roleRef binds ClusterRole cluster-admin", what))
		}
		if WildcardRole(obj) {
			problems = append(problems, warnf(file(i), RuleWildcardRBAC, OptInHint(RuleWildcardRBAC),
				"%s: rules grant every verb on every resource of every API group", what))
		}
		if j, verbs := EscalatingRole(obj); verbs != "" {
			problems = append(problems, warnf(file(i), RuleRBACEscalation, OptInHint(RuleRBACEscalation),
				"%s: rules[%d] grants the privilege-escalating verbs %s", what, j, verbs))
		}
	}
	return problems
}

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

// privilegedDeployments warns about Deployments of the install strategy whose pods are privileged.
func privilegedDeployments(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if why := PrivilegedPod(&d.Spec.Template.Spec); why != "" {
			problems = append(problems, warnf(file, RulePrivilegedPod, OptInHint(RulePrivilegedPod),
				"ClusterServiceVersion %s: spec.install.spec.deployments[%d] (%s) runs %s", csv.Name, i, d.Name, why))
		}
	}
	return problems
}
