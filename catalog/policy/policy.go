// Package policy is the hostile-input policy that the catalog and the installer share: pure predicates on what a
// bundle asks for (CRDs in Kubernetes' own groups, wildcard or privilege-escalating RBAC, bindings to privileged
// roles, aggregated ClusterRoles, privileged pods), the rules and opt-in annotations of what ALM refuses by default,
// and the one list of bundle object kinds ALM installs.
package policy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Rules of the checks on hostile input that both the catalog and the installer enforce (see "Hostile inputs" in the
// README). The installer refuses all but RuleCRDBuiltinGroup only unless a cluster admin opts in (AnnotationAllowPrefix).
const (
	// RuleCRDBuiltinGroup: a CRD in a group Kubernetes serves.
	RuleCRDBuiltinGroup = "crd-builtin-group"
	// RuleWildcardRBAC: `*` verbs on `*` resources of `*` groups.
	RuleWildcardRBAC = "wildcard-rbac"
	// RuleRBACEscalation: a rule that grants escalate or bind on roles, or impersonation, by name or through `*`.
	RuleRBACEscalation = "rbac-escalation"
	// RulePrivilegedBinding: a binding to a role Kubernetes ships with broad or system powers (cluster-admin, admin,
	// edit, system:*). It was "cluster-admin-binding" before it covered more than cluster-admin.
	RulePrivilegedBinding = "privileged-role-binding"
	// RuleAggregatedRole: a ClusterRole with an aggregationRule, which gathers the rules of other ClusterRoles.
	RuleAggregatedRole = "aggregated-clusterrole"
	// RuleAggregateToUserRoles: a ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-<role> (so that
	// Kubernetes adds its rules to admin, edit or view, and to every binding of them) whose rules reach beyond the
	// custom resources the bundle ships.
	RuleAggregateToUserRoles = "aggregate-to-user-roles"
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
