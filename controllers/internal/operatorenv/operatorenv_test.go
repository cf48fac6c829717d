package operatorenv

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func TestSpec(t *testing.T) {
	spec := appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers: []corev1.Container{
			{Name: "manager", Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: EnvName, Value: "spoofed"}}},
			{Name: "sidecar"},
		},
	}}}
	ov := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Name: "op.v2.0.0", Namespace: "ops"}}
	if got := Spec(ov, spec); fmt.Sprint(got.Template.Spec.Containers[1].Env) != "[]" {
		t.Errorf("a version without spec.handoff got env %v", got.Template.Spec.Containers[1].Env)
	}
	ov.Spec.Handoff = &operatorsv1alpha1.HandoffSpec{Timeout: metav1.Duration{}}
	got := Spec(ov, spec)
	for i, c := range append(got.Template.Spec.InitContainers, got.Template.Spec.Containers...) {
		want := "[{OPERATOR_VERSION_NAME op.v2.0.0 nil} {OPERATOR_VERSION_NAMESPACE ops nil}]"
		if i == 1 {
			want = "[{A 1 nil} {OPERATOR_VERSION_NAME op.v2.0.0 nil} {OPERATOR_VERSION_NAMESPACE ops nil}]"
		}
		if fmt.Sprint(c.Env) != want {
			t.Errorf("container %s env = %v, want %s", c.Name, c.Env, want)
		}
	}
	if spec.Template.Spec.Containers[0].Env[1].Value != "spoofed" {
		t.Error("Spec changed the strategy's own spec")
	}
}
