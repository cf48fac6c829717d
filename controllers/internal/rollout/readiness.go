package rollout

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// DeploymentReady says whether a Deployment has finished rolling out its current spec, as `kubectl rollout status`
// judges it, and if not, why. An in-place update of a Deployment the previous version ran is ready only once the new
// pods are available; until then the old pods keep serving.
func DeploymentReady(d *appsv1.Deployment) (bool, string) {
	if d.Status.ObservedGeneration < d.Generation {
		return false, fmt.Sprintf("Deployment %s: waiting for the spec change to be observed", d.Name)
	}
	if failed, why := DeploymentFailed(d); failed {
		return false, why
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.UpdatedReplicas < want {
		return false, fmt.Sprintf("Deployment %s: %d of %d replicas updated", d.Name, d.Status.UpdatedReplicas, want)
	}
	if d.Status.Replicas > d.Status.UpdatedReplicas {
		return false, fmt.Sprintf("Deployment %s: %d old replicas pending termination", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas)
	}
	if d.Status.AvailableReplicas < want {
		return false, fmt.Sprintf("Deployment %s: %d of %d updated replicas available%s", d.Name, d.Status.AvailableReplicas, want, AvailableDetail(d))
	}
	available := false
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			available = true
		}
	}
	if !available {
		return false, fmt.Sprintf("Deployment %s: not Available%s", d.Name, AvailableDetail(d))
	}
	return true, ""
}

// DeploymentFailed says whether the rollout of a Deployment's current spec has failed: the deployment controller
// reports Progressing=False with reason ProgressDeadlineExceeded.
func DeploymentFailed(d *appsv1.Deployment) (bool, string) {
	return DeploymentFailedSince(d, time.Time{})
}

// DeploymentFailedSince is DeploymentFailed, for a spec applied at since: a ProgressDeadlineExceeded condition last
// updated before since, or in the same second (both times have seconds only), is about an earlier spec's rollout;
// this spec's own deadline passes later. (Seen on a real cluster: when a new spec's ReplicaSet
// exists already, the deployment controller observes the new generation before it replaces the old rollout's
// ProgressDeadlineExceeded, so a good version read as failed for an instant.)
func DeploymentFailedSince(d *appsv1.Deployment, since time.Time) (bool, string) {
	if d.Status.ObservedGeneration < d.Generation {
		return false, ""
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" &&
			(since.IsZero() || c.LastUpdateTime.Time.After(since)) {
			return true, fmt.Sprintf("Deployment %s: progress deadline exceeded: %s%s", d.Name, c.Message, AvailableDetail(d))
		}
	}
	return false, ""
}

// AvailableDetail is the reason and message of a Deployment's Available=False condition, which say why its pods
// are not available (e.g. a crashing container's exit code and last log lines), or "".
func AvailableDetail(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse && c.Message != "" {
			return fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	return ""
}
