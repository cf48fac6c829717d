package objectcache

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The cache of ALM's objects reads Deployments from the manager's cache, and answers for them as it does for the
// kinds it holds itself: ALM's Deployments' metadata, hash annotation included; nothing of a Deployment ALM did not
// install; the lists' label selectors kept. Other kinds are read from the cache of ALM's objects.
func TestDeploymentsFromTheManagersCache(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := appsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	deployment := func(name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels,
			Annotations: map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashA}}}
	}
	ours := map[string]string{operatorsv1alpha1.LabelAppType: "pkg", "owner": "v1"}
	manager := fake.NewClientBuilder().WithScheme(s).WithObjects(
		deployment("ours", ours), deployment("also-ours", map[string]string{operatorsv1alpha1.LabelAppType: "pkg", "owner": "v2"}),
		deployment("theirs", map[string]string{"owner": "v1"})).Build()
	objects := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "config", Labels: ours}}).Build()
	r := deploymentsFrom{objects: objects, deployments: manager}

	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(deploymentGVK)
	if err := r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "ours"}, meta); err != nil {
		t.Fatal(err)
	}
	if meta.Name != "ours" || meta.Labels["owner"] != "v1" || meta.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != hashA ||
		meta.GroupVersionKind() != deploymentGVK {
		t.Errorf("ALM's Deployment read as %+v", meta)
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "theirs"}, meta); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment without ALM's label: %v, want NotFound", err)
	}

	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := r.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if names := itemNames(list); len(names) != 2 || !names["ours"] || !names["also-ours"] {
		t.Errorf("listed %v, want ALM's two Deployments", names)
	}
	if err := r.List(ctx, list, client.InNamespace("ns"), client.MatchingLabels{"owner": "v1"}); err != nil {
		t.Fatal(err)
	}
	if names := itemNames(list); len(names) != 1 || !names["ours"] || list.Items[0].GroupVersionKind() != deploymentGVK {
		t.Errorf("listed %v by owner v1, want only ALM's Deployment ours, with its kind", names)
	}

	cm := &metav1.PartialObjectMetadata{}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "config"}, cm); err != nil || cm.Labels["owner"] != "v1" {
		t.Errorf("a ConfigMap from the cache of ALM's objects: %v, %+v", err, cm.ObjectMeta)
	}
}

func itemNames(list *metav1.PartialObjectMetadataList) map[string]bool {
	out := map[string]bool{}
	for _, item := range list.Items {
		out[item.Name] = true
	}
	return out
}
