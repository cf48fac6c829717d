package loops

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache keeps what a Deployment's readiness is judged by, not its pod template nor its selector (installer.explain
// finds the pods by the bundle's: test/e2e's TestDiagnosisFromRealPods checks that a real cluster's ImagePullBackOff is explained).
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
	if len(got.Spec.Template.Spec.Containers) != 0 || got.ManagedFields != nil || got.Spec.Selector != nil {
		t.Errorf("pod template, selector or managedFields kept: %+v", got)
	}
	if *got.Spec.Replicas != 2 || *got.Spec.ProgressDeadlineSeconds != 600 || got.Generation != 3 || got.Annotations["a"] != "b" ||
		got.Status.AvailableReplicas != 2 {
		t.Errorf("readiness fields lost: %+v", got)
	}
}
