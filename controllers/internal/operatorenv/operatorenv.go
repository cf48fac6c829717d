// Package operatorenv is the environment ALM gives an operator's containers, as OLM gives OPERATOR_CONDITION_NAME:
// a version that takes part in its upgrade (spec.handoff) learns which OperatorVersion it runs as, to read the
// hand-over ALM requests there and answer it in its status. Bundle authors: see the README, "The hand-over".
package operatorenv

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The variables ALM sets on every container (and init container) of a version with spec.handoff. A value the
// bundle sets under the same name is replaced: the name must be the OperatorVersion's, whatever the bundle says.
const (
	// EnvName is the OperatorVersion's name (the CSV's name).
	EnvName = "OPERATOR_VERSION_NAME"
	// EnvNamespace is its namespace, the namespace the operator runs in.
	EnvNamespace = "OPERATOR_VERSION_NAMESPACE"
)

// Spec returns a copy of a Deployment spec of ov's install strategy with ALM's environment added to its
// containers; spec itself is not changed. A version without spec.handoff gets an unchanged copy.
func Spec(ov *operatorsv1alpha1.OperatorVersion, spec appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	out := *spec.DeepCopy()
	if ov.Spec.Handoff == nil {
		return out
	}
	vars := []corev1.EnvVar{{Name: EnvName, Value: ov.Name}, {Name: EnvNamespace, Value: ov.Namespace}}
	pod := &out.Template.Spec
	for i := range pod.Containers {
		pod.Containers[i].Env = set(pod.Containers[i].Env, vars)
	}
	for i := range pod.InitContainers {
		pod.InitContainers[i].Env = set(pod.InitContainers[i].Env, vars)
	}
	return out
}

// set returns env with each of vars set: replaced where env names it, appended otherwise.
func set(env, vars []corev1.EnvVar) []corev1.EnvVar {
	for _, v := range vars {
		found := false
		for i := range env {
			if env[i].Name == v.Name {
				env[i], found = v, true
			}
		}
		if !found {
			env = append(env, v)
		}
	}
	return env
}
