package rollout

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDeploymentReady(t *testing.T) {
	available := []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	rolledOut := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2, Conditions: available}
	cases := []struct {
		name   string
		gen    int64
		status appsv1.DeploymentStatus
		ready  bool
		why    string
	}{
		{"rolled out", 2, rolledOut, true, ""},
		{"spec change not observed yet (an upgrade just updated it)", 3, rolledOut, false, "waiting for the spec change to be observed"},
		{"new replicas not updated", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2, Conditions: available}, false, "1 of 2 replicas updated"},
		{"old replicas still running", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 2, Conditions: available}, false, "1 old replicas pending termination"},
		{"updated but not available", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1, Conditions: available}, false, "1 of 2 updated replicas available"},
		{"no Available condition", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}, false, "not Available"},
		{"progress deadline exceeded", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet x has timed out"}}}, false, "progress deadline exceeded"},
		{"pods crash: the reason is carried", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "CrashLoopBackOff", Message: "container manager exited with code 2"}}}, false, "0 of 2 updated replicas available (CrashLoopBackOff: container manager exited with code 2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "op", Generation: tc.gen}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}, Status: tc.status}
			ready, why := DeploymentReady(d)
			if ready != tc.ready || !strings.Contains(why, tc.why) {
				t.Fatalf("DeploymentReady = %v, %q; want %v, %q", ready, why, tc.ready, tc.why)
			}
		})
	}
}

func TestDeploymentFailed(t *testing.T) {
	deadline := []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet x has timed out"},
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "CrashLoopBackOff", Message: "exit code 2"},
	}
	cases := []struct {
		name   string
		gen    int64
		status appsv1.DeploymentStatus
		failed bool
	}{
		{"deadline exceeded for the current spec", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: deadline}, true},
		{"deadline exceeded for an older spec (a newer version just updated it)", 3, appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: deadline}, false},
		{"progressing", 2, appsv1.DeploymentStatus{ObservedGeneration: 2}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "op", Generation: tc.gen}, Status: tc.status}
			failed, why := DeploymentFailed(d)
			if failed != tc.failed || (failed && !strings.Contains(why, "(CrashLoopBackOff: exit code 2)")) {
				t.Fatalf("DeploymentFailed = %v, %q; want %v with the pods' reason", failed, why, tc.failed)
			}
		})
	}
}

// A ProgressDeadlineExceeded left by an earlier spec's rollout does not fail the spec applied after it.
func TestDeploymentFailedSince(t *testing.T) {
	applied := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "op", Generation: 3}, Status: appsv1.DeploymentStatus{ObservedGeneration: 3}}
	for _, tc := range []struct {
		updated time.Time
		failed  bool
	}{{applied.Add(-time.Second), false}, {applied, false}, {applied.Add(20 * time.Second), true}} {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "op-1" has timed out progressing.`, LastUpdateTime: metav1.NewTime(tc.updated)}}
		if failed, why := DeploymentFailedSince(d, applied); failed != tc.failed {
			t.Errorf("condition updated %s, spec applied %s: failed %v (%s), want %v", tc.updated.Format(time.TimeOnly), applied.Format(time.TimeOnly), failed, why, tc.failed)
		}
	}
}
