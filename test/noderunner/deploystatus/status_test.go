package deploystatus

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDeploymentStatus(t *testing.T) {
	now := time.Now()
	ready := Pod{Hash: "new", Ready: true, ReadySince: now.Add(-time.Minute)}
	crash := &Problem{Reason: ReasonCrashLoopBackOff, Message: "exit code 3"}
	for _, tc := range []struct {
		name                   string
		replicas               int32
		pods                   []Pod
		image                  *Problem
		wantAvailable          corev1.ConditionStatus
		wantAvailableReason    string
		wantProgressingReason  string
		wantReplicas, wantUpd  int32
		wantReady, wantUnavail int32
	}{
		{"all ready", 1, []Pod{ready}, nil, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, ReasonNewReplicaSetAvailable, 1, 1, 1, 0},
		{"starting", 1, []Pod{{Hash: "new"}}, nil, corev1.ConditionFalse, ReasonMinimumReplicasUnavailable, ReasonReplicaSetUpdated, 1, 1, 0, 1},
		{"crashing", 1, []Pod{{Hash: "new", Problem: crash}}, nil, corev1.ConditionFalse, ReasonCrashLoopBackOff, ReasonReplicaSetUpdated, 1, 1, 0, 1},
		{"old stopping", 1, []Pod{ready, {Hash: "old", Terminating: true}}, nil, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, ReasonReplicaSetUpdated, 2, 1, 1, 0},
		{"old serving, new image missing", 1, []Pod{{Hash: "old", Ready: true}}, &Problem{Reason: ReasonImageNotFound}, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, ReasonReplicaSetUpdated, 1, 0, 1, 0},
		{"image missing", 1, nil, &Problem{Reason: ReasonImageNotFound}, corev1.ConditionFalse, ReasonImageNotFound, ReasonReplicaSetUpdated, 0, 0, 0, 1},
		{"scaled to zero", 0, nil, nil, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, ReasonNewReplicaSetAvailable, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(tc.replicas)}}
			st, _ := Compute(d, "new", tc.pods, tc.image, now)
			if st.ObservedGeneration != 3 || st.Replicas != tc.wantReplicas || st.UpdatedReplicas != tc.wantUpd ||
				st.ReadyReplicas != tc.wantReady || st.UnavailableReplicas != tc.wantUnavail {
				t.Errorf("counts = %+v", st)
			}
			conds := map[appsv1.DeploymentConditionType]appsv1.DeploymentCondition{}
			for _, c := range st.Conditions {
				conds[c.Type] = c
			}
			if a := conds[appsv1.DeploymentAvailable]; a.Status != tc.wantAvailable || a.Reason != tc.wantAvailableReason {
				t.Errorf("Available = %s/%s, want %s/%s", a.Status, a.Reason, tc.wantAvailable, tc.wantAvailableReason)
			}
			if p := conds[appsv1.DeploymentProgressing]; p.Reason != tc.wantProgressingReason {
				t.Errorf("Progressing reason = %s, want %s", p.Reason, tc.wantProgressingReason)
			}
		})
	}
}

func TestSetConditionKeepsTimesWhenUnchanged(t *testing.T) {
	t0 := time.Now().Add(-time.Hour)
	st := &appsv1.DeploymentStatus{}
	setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionTrue, "R", "m", t0)
	setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionTrue, "R", "m", time.Now())
	if c := st.Conditions[0]; !c.LastUpdateTime.Time.Equal(metav1.NewTime(t0).Time) || !c.LastTransitionTime.Time.Equal(metav1.NewTime(t0).Time) {
		t.Errorf("times changed: %+v", c)
	}
	setCondition(st, appsv1.DeploymentAvailable, corev1.ConditionTrue, "R", "other", time.Now())
	if c := st.Conditions[0]; !c.LastTransitionTime.Time.Equal(metav1.NewTime(t0).Time) || c.LastUpdateTime.Time.Equal(metav1.NewTime(t0).Time) {
		t.Errorf("a new message must update lastUpdateTime only: %+v", c)
	}
}

func TestProgressDeadline(t *testing.T) {
	now := time.Now()
	crashing := []Pod{{Hash: "new", Problem: &Problem{Reason: ReasonCrashLoopBackOff, Message: "exit code 3"}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), ProgressDeadlineSeconds: ptr.To[int32](10)}}
	first, recheck := Compute(d, "new", crashing, nil, now)
	if recheck != 10*time.Second {
		t.Errorf("recheck = %s, want the deadline", recheck)
	}
	d.Status = first
	second, recheck := Compute(d, "new", crashing, nil, now.Add(5*time.Second))
	if c := findCondition(second.Conditions, appsv1.DeploymentProgressing); c.Reason != ReasonReplicaSetUpdated || recheck != 5*time.Second {
		t.Errorf("before the deadline: %+v, recheck %s", c, recheck)
	}
	d.Status = second
	third, _ := Compute(d, "new", crashing, nil, now.Add(11*time.Second))
	c := findCondition(third.Conditions, appsv1.DeploymentProgressing)
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonProgressDeadlineExceeded || c.Message != `ReplicaSet "d-new" has timed out progressing: exit code 3` {
		t.Errorf("after the deadline: %+v", c)
	}
	d.Status = third
	ready := []Pod{{Hash: "new", Ready: true, ReadySince: now}}
	fourth, _ := Compute(d, "new", ready, nil, now.Add(12*time.Second))
	if c := findCondition(fourth.Conditions, appsv1.DeploymentProgressing); c.Reason != ReasonNewReplicaSetAvailable {
		t.Errorf("once available: %+v", c)
	}
}
