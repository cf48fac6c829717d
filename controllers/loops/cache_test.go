package loops

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache keeps what a Deployment's readiness is judged by, and the selector of its pods (installer.explain reads
// them to say why it is not available: without it, a real cluster's ImagePullBackOff went unexplained), not its pod
// template.
func TestDeploymentReadiness(t *testing.T) {
	replicas, deadline := int32(2), int32(600)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 3, Annotations: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, ProgressDeadlineSeconds: &deadline,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "op"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, AvailableReplicas: 2},
	}
	out, err := DeploymentReadiness(d)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*appsv1.Deployment)
	if len(got.Spec.Template.Spec.Containers) != 0 || got.ManagedFields != nil {
		t.Errorf("pod template or managedFields kept: %+v", got)
	}
	if *got.Spec.Replicas != 2 || *got.Spec.ProgressDeadlineSeconds != 600 || got.Generation != 3 || got.Annotations["a"] != "b" ||
		got.Status.AvailableReplicas != 2 || got.Spec.Selector == nil || got.Spec.Selector.MatchLabels["app"] != "op" {
		t.Errorf("readiness fields lost: %+v", got)
	}
}
