// Package rollout says why a Deployment's pods do not become available, from what the cluster already reports: the
// Deployment's conditions (ReplicaFailure from the deployment controller, e.g. a quota) and its pods' (an image that
// cannot be pulled, a container that keeps crashing with its exit code and last log lines, a pod no node can run).
// It is pure: the caller reads the Deployment and pods.
package rollout

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Problem is why a Deployment's pods do not become available: a reason (an OperatorVersion condition reason) and a
// message naming the object and the cause.
type Problem struct {
	Reason  string
	Message string
}

// Container waiting reasons of the kubelet, by the problem reason they are reported as.
var waitingReasons = map[string]string{
	"ErrImagePull":               operatorsv1alpha1.ReasonImagePullFailed,
	"ImagePullBackOff":           operatorsv1alpha1.ReasonImagePullFailed,
	"InvalidImageName":           operatorsv1alpha1.ReasonImagePullFailed,
	"ErrImageNeverPull":          operatorsv1alpha1.ReasonImagePullFailed,
	"RegistryUnavailable":        operatorsv1alpha1.ReasonImagePullFailed,
	"SignatureValidationFailed":  operatorsv1alpha1.ReasonImagePullFailed,
	"CrashLoopBackOff":           operatorsv1alpha1.ReasonCrashLoopBackOff,
	"CreateContainerConfigError": operatorsv1alpha1.ReasonPodCreationFailed,
	"CreateContainerError":       operatorsv1alpha1.ReasonPodCreationFailed,
	"RunContainerError":          operatorsv1alpha1.ReasonPodCreationFailed,
}

// maxLog bounds the log lines carried in a crash's message.
const maxLog = 2000

// Diagnose returns the most useful reason the cluster reports for d's pods not being available, or nil when it
// reports none (the pods are starting). pods are d's pods (any order; terminating ones are ignored). In order: the
// deployment controller cannot create pods (ReplicaFailure); a pod's container cannot pull its image, crashes or
// cannot be created; a pod cannot be scheduled.
func Diagnose(d *appsv1.Deployment, pods []corev1.Pod) *Problem {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return &Problem{operatorsv1alpha1.ReasonPodCreationFailed, fmt.Sprintf("pods cannot be created: %s: %s", c.Reason, c.Message)}
		}
	}
	sorted := append([]corev1.Pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var unschedulable *Problem
	for i := range sorted {
		p := &sorted[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if prob := containerProblem(p); prob != nil {
			return prob
		}
		if unschedulable == nil {
			unschedulable = scheduling(p)
		}
	}
	return unschedulable
}

// containerProblem is the first problem of p's init containers, then its containers.
func containerProblem(p *corev1.Pod) *Problem {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range statuses {
			if prob := waiting(p, &statuses[i]); prob != nil {
				return prob
			}
			if prob := exited(p, &statuses[i]); prob != nil {
				return prob
			}
		}
	}
	return nil
}

// waiting is the problem of a container that waits for a reason the kubelet reports as one.
func waiting(p *corev1.Pod, cs *corev1.ContainerStatus) *Problem {
	w := cs.State.Waiting
	if w == nil {
		return nil
	}
	reason, ok := waitingReasons[w.Reason]
	if !ok {
		return nil
	}
	if reason == operatorsv1alpha1.ReasonCrashLoopBackOff {
		return &Problem{reason, crashed(p, cs)}
	}
	msg := fmt.Sprintf("pod %s container %s: %s", p.Name, cs.Name, w.Reason)
	if reason == operatorsv1alpha1.ReasonImagePullFailed {
		msg = fmt.Sprintf("pod %s container %s: image %s not found or not pullable: %s", p.Name, cs.Name, cs.Image, w.Reason)
	}
	if w.Message != "" {
		msg += ": " + w.Message
	}
	return &Problem{reason, msg}
}

// exited is the problem of a container that is not ready and exited with an error: it has just exited, or it runs
// again after such an exit. A crash-looping container is in CrashLoopBackOff only between restarts; a rollout's
// deadline may pass while it is running or has just exited.
func exited(p *corev1.Pod, cs *corev1.ContainerStatus) *Problem {
	if cs.Ready {
		return nil
	}
	t := cs.State.Terminated
	if t == nil && cs.RestartCount > 0 {
		t = cs.LastTerminationState.Terminated
	}
	if t == nil || t.ExitCode == 0 {
		return nil
	}
	return &Problem{operatorsv1alpha1.ReasonCrashLoopBackOff, exitedWith(p, cs, t)}
}

// crashed describes a container in CrashLoopBackOff: its last exit code and reason, its restarts, and its last log
// lines (the termination message, which is the log's tail with terminationMessagePolicy FallbackToLogsOnError).
func crashed(p *corev1.Pod, cs *corev1.ContainerStatus) string {
	t := cs.LastTerminationState.Terminated
	if t == nil {
		return fmt.Sprintf("pod %s container %s keeps exiting (restarts: %d)", p.Name, cs.Name, cs.RestartCount)
	}
	return exitedWith(p, cs, t)
}

// exitedWith describes a container's exit t.
func exitedWith(p *corev1.Pod, cs *corev1.ContainerStatus, t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("pod %s container %s exited with exit code %d", p.Name, cs.Name, t.ExitCode)
	if t.Reason != "" {
		msg += " (" + t.Reason + ")"
	}
	msg += fmt.Sprintf(", restarts: %d", cs.RestartCount)
	if log := strings.TrimSpace(t.Message); log != "" {
		if len(log) > maxLog {
			log = "..." + log[len(log)-maxLog:]
		}
		msg += "; last log lines: " + log
	} else {
		msg += fmt.Sprintf("; its log: kubectl logs -n %s %s -c %s --previous", p.Namespace, p.Name, cs.Name)
	}
	return msg
}

// scheduling is the problem of a pod the scheduler cannot place.
func scheduling(p *corev1.Pod) *Problem {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &Problem{operatorsv1alpha1.ReasonUnschedulable, fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message)}
		}
	}
	return nil
}
