package installer

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/ownership"
)

// ConflictError is an object the version wants that exists and belongs to someone else: a user, another package,
// or the same package in another namespace. ALM never takes such an object over.
type ConflictError struct{ Msg string }

func (e *ConflictError) Error() string { return e.Msg }

// Apply creates desired, or brings the existing object to the desired content, with ov's ownership:
//   - a new object is claimed by ov (labels, and a controller ownerReference when namespaced);
//   - an object ov already owns is updated only when its desired content changed (AnnotationHash);
//   - an object of ov's package that no version owns (a CRD created for another operator's requirement) is claimed;
//   - an object another version of the same package owns in the same namespace is updated in place (same UID) and
//     ov is added as a further owner; the adoption loop hands it over once ov has Succeeded.
//
// It returns the object as stored.
func Apply(ctx context.Context, c client.Client, ov *operatorsv1alpha1.OperatorVersion, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	desired = desired.DeepCopy()
	hash := Hash(desired)
	annotations := desired.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationHash] = hash
	desired.SetAnnotations(annotations)

	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(desired.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		ownership.Claim(desired, ov)
		if err := c.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("creating %s %s: %w", desired.GetKind(), describe(desired), err)
		}
		return desired, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", desired.GetKind(), describe(desired), err)
	}
	if err := checkOwner(existing, ov); err != nil {
		return nil, err
	}
	updated := existing.DeepCopy()
	if existing.GetAnnotations()[AnnotationHash] != hash {
		for k, v := range desired.Object {
			if k != "metadata" && k != "status" {
				updated.Object[k] = v
			}
		}
		for k := range existing.Object {
			if _, ok := desired.Object[k]; !ok && k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				delete(updated.Object, k)
			}
		}
		updated.SetLabels(merge(updated.GetLabels(), desired.GetLabels()))
		updated.SetAnnotations(merge(updated.GetAnnotations(), desired.GetAnnotations()))
	}
	if ownership.IsOwnedBy(existing, ov) || existing.GetLabels()[operatorsv1alpha1.LabelOwner] == "" {
		// Ours, or of our package but owned by no version (a CRD created for a requirement, or released by an
		// older version): claim it; this also restores labels or a reference someone removed.
		ownership.Claim(updated, ov)
		updated.SetOwnerReferences(mergeRefs(existing, updated))
	} else {
		ownership.CoOwn(updated, ov)
	}
	if equality.Semantic.DeepEqual(existing.Object, updated.Object) {
		return existing, nil
	}
	if err := c.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("updating %s %s: %w", desired.GetKind(), describe(desired), err)
	}
	return updated, nil
}

// checkOwner refuses objects ALM did not create for this package in this namespace.
func checkOwner(existing *unstructured.Unstructured, ov *operatorsv1alpha1.OperatorVersion) error {
	labels := existing.GetLabels()
	pkg, ns := labels[operatorsv1alpha1.LabelAppType], labels[operatorsv1alpha1.LabelOwnerNamespace]
	switch {
	case pkg == "":
		return &ConflictError{Msg: fmt.Sprintf("%s %s exists and was not created by ALM; delete or rename it so that %s can install", existing.GetKind(), describe(existing), ov.Name)}
	case pkg != ownership.LabelValue(ov.Spec.PackageName):
		return &ConflictError{Msg: fmt.Sprintf("%s %s belongs to package %s; package %s cannot install an object of the same name", existing.GetKind(), describe(existing), pkg, ov.Spec.PackageName)}
	case ns != "" && ns != ov.Namespace && existing.GetKind() != "CustomResourceDefinition":
		return &ConflictError{Msg: fmt.Sprintf("%s %s belongs to the %s installed in namespace %s", existing.GetKind(), describe(existing), pkg, ns)}
	}
	return nil
}

// mergeRefs keeps the other owners' references of existing and ov's reference from updated.
func mergeRefs(existing, updated *unstructured.Unstructured) []metav1.OwnerReference {
	refs := updated.GetOwnerReferences()
	for _, ref := range existing.GetOwnerReferences() {
		found := false
		for _, r := range refs {
			if r.UID == ref.UID {
				found = true
			}
		}
		if !found {
			ref.Controller = nil // ov is the controller
			refs = append(refs, ref)
		}
	}
	return refs
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
