package installer

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/objectcache"
	"github.com/almproject/alm/controllers/internal/ownership"
)

// ConflictError is an object the version wants that exists and belongs to someone else: a user, another package,
// or the same package in another namespace. ALM never takes such an object over.
type ConflictError struct{ Msg string }

func (e *ConflictError) Error() string { return e.Msg }

// Apply creates desired, or brings the existing object to the desired content, with ov's ownership:
//   - a new object is claimed by ov (labels, and a controller ownerReference when namespaced);
//   - an object ov already owns is updated only when its desired content changed (operatorsv1alpha1.AnnotationAppliedHash);
//   - an object of ov's package that no version owns (a CRD created for another operator's requirement) is claimed;
//   - an object another version of the same package owns in the same namespace is updated in place (same UID) and
//     ov is added as a further owner; the adoption loop hands it over once ov has Succeeded.
//
// It reads the existing object's metadata from objects (a cache of ALM's objects, see objectcache.For), and from live (the
// API server) only when creating it fails because it exists after all. It writes only what changed: nothing when
// content and ownership are as desired, a metadata patch when only the ownership changes, an update of the whole
// object when its content changed. Writes carry the resourceVersion read, so a stale read ends in a conflict, not in
// a lost change. It returns the object as stored: the whole object when it was created or updated, else its metadata.
func Apply(ctx context.Context, c client.Client, objects, live client.Reader, ov *operatorsv1alpha1.OperatorVersion, desired *unstructured.Unstructured) (client.Object, error) {
	desired = desired.DeepCopy()
	hash := Hash(desired)
	annotations := desired.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[operatorsv1alpha1.AnnotationAppliedHash] = hash
	desired.SetAnnotations(annotations)

	existing, err := getMetadata(ctx, objects, desired)
	if err == nil {
		objectcache.RestoreHash(existing) // the cache keeps it out of the object
	}
	if apierrors.IsNotFound(err) {
		created := desired.DeepCopy()
		ownership.Claim(created, ov)
		err = c.Create(ctx, created)
		if err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating %s %s: %w", desired.GetKind(), describe(desired), err)
		}
		// The cache is behind, or the object is not ALM's: the API server has it.
		existing, err = getMetadata(ctx, live, desired)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", desired.GetKind(), describe(desired), err)
	}
	if err := checkOwner(existing, ov); err != nil {
		return nil, err
	}
	meta := existing.DeepCopy()
	contentChanged := existing.GetAnnotations()[operatorsv1alpha1.AnnotationAppliedHash] != hash
	if contentChanged {
		meta.SetLabels(merge(meta.GetLabels(), desired.GetLabels()))
		meta.SetAnnotations(merge(meta.GetAnnotations(), desired.GetAnnotations()))
	}
	// Only a write that changes the content makes ov a further owner of an object another version owns: the
	// hand-over moves an unchanged one in one write of its own, adding ov before removing the old version.
	ownership.Take(existing, meta, ov, contentChanged)
	switch {
	case contentChanged:
		return update(ctx, c, desired, meta)
	case equality.Semantic.DeepEqual(existing.ObjectMeta, meta.ObjectMeta):
		return existing, nil
	}
	if err := c.Patch(ctx, meta, client.MergeFromWithOptions(existing, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("updating the ownership of %s %s: %w", desired.GetKind(), describe(desired), err)
	}
	return meta, nil
}

// update writes desired's content with meta as its metadata (the existing object's, with ov's ownership).
func update(ctx context.Context, c client.Client, desired *unstructured.Unstructured, meta *metav1.PartialObjectMetadata) (client.Object, error) {
	metadata, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&meta.ObjectMeta)
	if err != nil {
		return nil, err
	}
	updated := desired.DeepCopy()
	updated.Object["metadata"] = metadata
	if err := c.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("updating %s %s: %w", desired.GetKind(), describe(desired), err)
	}
	return updated, nil
}

// getMetadata reads the metadata of the object desired names.
func getMetadata(ctx context.Context, r client.Reader, desired *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(desired.GroupVersionKind())
	if err := r.Get(ctx, client.ObjectKeyFromObject(desired), meta); err != nil {
		return nil, err
	}
	meta.SetGroupVersionKind(desired.GroupVersionKind())
	return meta, nil
}

// checkOwner refuses objects ALM did not create for this package in this namespace.
func checkOwner(existing client.Object, ov *operatorsv1alpha1.OperatorVersion) error {
	kind := existing.GetObjectKind().GroupVersionKind().Kind
	labels := existing.GetLabels()
	pkg, ns := labels[operatorsv1alpha1.LabelAppType], labels[operatorsv1alpha1.LabelOwnerNamespace]
	switch {
	case pkg == "":
		return &ConflictError{Msg: fmt.Sprintf("%s %s exists and was not created by ALM; delete or rename it so that %s can install", kind, describe(existing), ov.Name)}
	case pkg != ownership.LabelValue(ov.Spec.PackageName):
		return &ConflictError{Msg: fmt.Sprintf("%s %s belongs to package %s; package %s cannot install an object of the same name", kind, describe(existing), pkg, ov.Spec.PackageName)}
	case ns != "" && ns != ov.Namespace && kind != "CustomResourceDefinition":
		return &ConflictError{Msg: fmt.Sprintf("%s %s belongs to the %s installed in namespace %s", kind, describe(existing), pkg, ns)}
	}
	return nil
}

func merge(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}

func describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
