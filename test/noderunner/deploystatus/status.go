// Package deploystatus computes the status the deployment controller would write for a Deployment from the local
// node runner's pods: replica counts and the Available and Progressing conditions, with the kubelet's reasons
// (CrashLoopBackOff, ImageNotFound, CreateContainerError) when pods fail. It is pure: no API server, no clock.
package deploystatus

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Condition reasons the node runner writes on a Deployment. The first five are the deployment controller's.
const (
	// ReasonMinimumReplicasAvailable: Available=True, enough replicas are ready.
	ReasonMinimumReplicasAvailable = "MinimumReplicasAvailable"
	// ReasonMinimumReplicasUnavailable: Available=False, too few replicas are ready and nothing failed (yet).
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	// ReasonNewReplicaSetAvailable: Progressing=True, the rollout is complete.
	ReasonNewReplicaSetAvailable = "NewReplicaSetAvailable"
	// ReasonReplicaSetUpdated: Progressing=True, the rollout is under way.
	ReasonReplicaSetUpdated = "ReplicaSetUpdated"
	// ReasonProgressDeadlineExceeded: Progressing=False, the rollout made no progress for progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonCrashLoopBackOff: a container keeps exiting; the message names it, its exit code, restarts and last log lines.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonImageNotFound: the runner has no archive with a container's image; the message lists the images it has.
	ReasonImageNotFound = "ImageNotFound"
	// ReasonCreateContainerError: a pod could not be prepared (no ServiceAccount, a missing ConfigMap, no entrypoint).
	ReasonCreateContainerError = "CreateContainerError"
)

// Problem is why replicas of a Deployment do not become ready.
type Problem struct {
	Reason  string
	Message string
}

// Pod is what the status of a Deployment needs to know of one of its pods.
type Pod struct {
	// Hash is the template hash the pod runs.
	Hash string
	// Terminating says its processes are being stopped (or have stopped).
	Terminating bool
	// Ready says all its containers are ready.
	Ready bool
	// ReadySince is when it last became ready.
	ReadySince time.Time
	// Problem is why it is not ready, if something failed.
	Problem *Problem
}

// Compute computes the status the deployment controller would write for d, whose current template hash
// is hash, from its local pods. A pod whose processes are still stopping counts in replicas (so "replicas ==
// updatedReplicas" means the old processes are gone), never as ready. imageProblem is set when the new template's
// image is missing. It also returns when the status should be computed again (minReadySeconds), 0 for never.
func Compute(d *appsv1.Deployment, hash string, pods []Pod, imageProblem *Problem, now time.Time) (appsv1.DeploymentStatus, time.Duration) {
	desired := ptr.Deref(d.Spec.Replicas, 1)
	st := d.Status.DeepCopy()
	st.ObservedGeneration = d.Generation
	st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0, 0
	minReady := time.Duration(d.Spec.MinReadySeconds) * time.Second
	var recheck time.Duration
	prob := imageProblem
	for _, p := range pods {
		st.Replicas++
		if p.Terminating {
			continue
		}
		if p.Hash == hash {
			st.UpdatedReplicas++
			if prob == nil {
				prob = p.Problem
			}
		}
		if !p.Ready {
			continue
		}
		st.ReadyReplicas++
		if wait := p.ReadySince.Add(minReady).Sub(now); wait > 0 {
			recheck = max(recheck, wait)
		} else {
			st.AvailableReplicas++
		}
	}
	st.UnavailableReplicas = max(desired-st.AvailableReplicas, 0)
	available := st.AvailableReplicas >= desired-maxUnavailable(d, desired)
	if wait := setConditions(st, d, hash, available, prob, now); wait > 0 && (recheck == 0 || wait < recheck) {
		recheck = wait
	}
	return *st, recheck
}

// setConditions sets Available and Progressing and returns when to look again for the progress deadline. When too
// few replicas are available, a problem (a crash loop, a missing image) is Available's reason and message.
func setConditions(st *appsv1.DeploymentStatus, d *appsv1.Deployment, hash string, available bool, prob *Problem, now time.Time) time.Duration {
	switch {
	case available:
		setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", now)
	case prob != nil:
		setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionFalse, prob.Reason, prob.Message, now)
	default:
		setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.", now)
	}
	return setProgressing(st, d, hash, prob, now)
}

// setProgressing follows the deployment controller: NewReplicaSetAvailable once the rollout is complete;
// ReplicaSetUpdated, with lastUpdateTime moved on, whenever the rollout makes progress (a new template, more updated,
// ready or available replicas, fewer old ones); ProgressDeadlineExceeded (False) when it made none for
// progressDeadlineSeconds. A problem of the new pods is appended to the message.
func setProgressing(st *appsv1.DeploymentStatus, d *appsv1.Deployment, hash string, prob *Problem, now time.Time) time.Duration {
	rs := fmt.Sprintf("ReplicaSet %q", d.Name+"-"+hash)
	desired := ptr.Deref(d.Spec.Replicas, 1)
	if st.UpdatedReplicas == desired && st.Replicas == desired && st.AvailableReplicas == desired {
		setCondition(st, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetAvailable, rs+" has successfully progressed.", now)
		return 0
	}
	detail := ""
	if prob != nil {
		detail = ": " + prob.Message
	}
	prev := findCondition(st.Conditions, appsv1.DeploymentProgressing)
	if prev == nil || !strings.HasPrefix(prev.Message, rs+" ") || progressed(&d.Status, st) {
		setCondition(st, appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, rs+" is progressing"+detail, now)
		findCondition(st.Conditions, appsv1.DeploymentProgressing).LastUpdateTime = metav1.NewTime(now)
		return deadline(d)
	}
	if prev.Reason == ReasonProgressDeadlineExceeded {
		return 0
	}
	last, limit := prev.LastUpdateTime, deadline(d)
	if limit > 0 && now.Sub(last.Time) >= limit {
		setCondition(st, appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, rs+" has timed out progressing"+detail, now)
		return 0
	}
	// No progress: the message may change (the problem), lastUpdateTime may not, so the deadline still counts.
	prev.Message = rs + " is progressing" + detail
	if limit > 0 {
		return last.Add(limit).Sub(now)
	}
	return 0
}

// progressed is the deployment controller's DeploymentProgressing: old is the status read, cur the one computed.
func progressed(old, cur *appsv1.DeploymentStatus) bool {
	return cur.UpdatedReplicas > old.UpdatedReplicas ||
		cur.Replicas-cur.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		cur.ReadyReplicas > old.ReadyReplicas ||
		cur.AvailableReplicas > old.AvailableReplicas
}

// deadline is progressDeadlineSeconds (600 by default), 0 when the Deployment has none or is paused.
func deadline(d *appsv1.Deployment) time.Duration {
	if d.Spec.Paused {
		return 0
	}
	return time.Duration(ptr.Deref(d.Spec.ProgressDeadlineSeconds, 600)) * time.Second
}

func findCondition(conds []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition sets a condition, keeping its times when nothing changed and its transition time when only the
// reason or message changed.
func setCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	ts := metav1.NewTime(now)
	want := appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: msg, LastUpdateTime: ts, LastTransitionTime: ts}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status {
			want.LastTransitionTime = c.LastTransitionTime
			if c.Reason == reason && c.Message == msg {
				want.LastUpdateTime = c.LastUpdateTime
			}
		}
		*c = want
		return
	}
	st.Conditions = append(st.Conditions, want)
}

// maxUnavailable is the rolling update's maxUnavailable resolved against desired (rounded down; 25% by default);
// a Recreate Deployment may have all replicas unavailable while it rolls out, but it is available only when all are.
func maxUnavailable(d *appsv1.Deployment, desired int32) int32 {
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return 0
	}
	mu := intstr.FromString("25%")
	surge := intstr.FromString("25%")
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		mu = ptr.Deref(ru.MaxUnavailable, mu)
		surge = ptr.Deref(ru.MaxSurge, surge)
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(&mu, int(desired), false)
	if err != nil {
		return 0
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(&surge, int(desired), true)
	if err == nil && u == 0 && s == 0 {
		u = 1
	}
	return int32(min(u, int(desired)))
}
