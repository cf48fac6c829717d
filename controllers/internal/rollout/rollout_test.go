package rollout

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func pod(name string, mutate func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	mutate(&p)
	return p
}

func waitingPod(name, reason, msg string) corev1.Pod {
	return pod(name, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager", Image: "example.com/op:1.0.0",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
	})
}

func TestDiagnose(t *testing.T) {
	crashing := pod("op-2", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager", RestartCount: 4,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error",
				Message: "flag provided but not defined: -zap-devel\nUsage of manager:"}}}}
	})
	// Between two restarts of a crash-looping container (seen on a real node when a rollout's deadline passed).
	running := pod("op-3", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager", RestartCount: 2,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				Message: "alm: flag provided but not defined: -no-such-flag"}}}}
	})
	justExited := pod("op-4", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	})
	recovered := pod("op-5", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager", RestartCount: 1, Ready: true,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
	})
	unschedulable := pod("op-1", func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	})
	terminating := waitingPod("op-0", "ErrImagePull", "old pod")
	terminating.DeletionTimestamp = &metav1.Time{}
	quota := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `pods "op-5d4" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2`}
	generic := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
		Message: "Deployment does not have minimum availability."}
	cases := []struct {
		name       string
		conditions []appsv1.DeploymentCondition
		pods       []corev1.Pod
		reason     string
		message    []string
	}{
		{"pods starting: nothing to say", []appsv1.DeploymentCondition{generic}, []corev1.Pod{pod("op-1", func(*corev1.Pod) {})}, "", nil},
		{"image cannot be pulled", []appsv1.DeploymentCondition{generic}, []corev1.Pod{waitingPod("op-1", "ImagePullBackOff", `Back-off pulling image "example.com/op:1.0.0"`)},
			operatorsv1alpha1.ReasonImagePullFailed, []string{"pod op-1 container manager", "image example.com/op:1.0.0 not found or not pullable", "ImagePullBackOff", "Back-off pulling"}},
		{"crash: exit code and last log lines", nil, []corev1.Pod{crashing},
			operatorsv1alpha1.ReasonCrashLoopBackOff, []string{"pod op-2 container manager exited with exit code 2 (Error), restarts: 4", "last log lines: flag provided but not defined"}},
		{"crash: running again after exiting with an error", nil, []corev1.Pod{running},
			operatorsv1alpha1.ReasonCrashLoopBackOff, []string{"pod op-3 container manager exited with exit code 1 (Error), restarts: 2", "-no-such-flag"}},
		{"crash: just exited, without its log's tail", nil, []corev1.Pod{justExited},
			operatorsv1alpha1.ReasonCrashLoopBackOff, []string{"exit code 1", "kubectl logs -n  op-4 -c manager"}},
		{"a container ready again after a crash is no problem", nil, []corev1.Pod{recovered}, "", nil},
		{"unschedulable, named with the scheduler's message", nil, []corev1.Pod{unschedulable},
			operatorsv1alpha1.ReasonUnschedulable, []string{"pod op-1 cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu."}},
		{"a container problem is more precise than another pod's scheduling", nil, []corev1.Pod{unschedulable, crashing},
			operatorsv1alpha1.ReasonCrashLoopBackOff, []string{"exit code 2"}},
		{"quota: the deployment controller cannot create pods", []appsv1.DeploymentCondition{quota, generic}, nil,
			operatorsv1alpha1.ReasonPodCreationFailed, []string{"pods cannot be created: FailedCreate", "exceeded quota"}},
		{"missing ConfigMap", nil, []corev1.Pod{waitingPod("op-1", "CreateContainerConfigError", `configmap "op-config" not found`)},
			operatorsv1alpha1.ReasonPodCreationFailed, []string{"CreateContainerConfigError", `configmap "op-config" not found`}},
		{"terminating pods are the old spec's", []appsv1.DeploymentCondition{generic}, []corev1.Pod{terminating}, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "op"}, Status: appsv1.DeploymentStatus{Conditions: tc.conditions}}
			got := Diagnose(d, tc.pods)
			if tc.reason == "" {
				if got != nil {
					t.Fatalf("Diagnose = %+v, want nothing", got)
				}
				return
			}
			if got == nil || got.Reason != tc.reason {
				t.Fatalf("Diagnose = %+v, want reason %s", got, tc.reason)
			}
			for _, part := range tc.message {
				if !strings.Contains(got.Message, part) {
					t.Errorf("message %q lacks %q", got.Message, part)
				}
			}
		})
	}
}
