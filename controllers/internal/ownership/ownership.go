// Package ownership is how ALM marks and finds what an OperatorVersion owns: labels on every object (the loops
// query them), plus an ownerReference on namespaced objects in the OperatorVersion's namespace (Kubernetes garbage
// collection). Cluster-scoped objects carry labels only: the garbage collector cannot resolve a namespaced owner
// from a cluster-scoped dependent.
package ownership

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Kinds ALM creates for an OperatorVersion, besides those recorded in its status inventory. Kinds whose API is
// not served (ServiceMonitor without the Prometheus operator) are skipped by the queries.
var Kinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
	appsv1.SchemeGroupVersion.WithKind("Deployment"),
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"},
}

// LabelValue returns s if it is a valid label value, else a shortened form that keeps a readable prefix and a hash,
// so that long OperatorVersion names still label and query consistently.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	prefix := []byte(s)
	if len(prefix) > 46 {
		prefix = prefix[:46]
	}
	for i, b := range prefix {
		if !labelSafe(b) {
			prefix[i] = '-'
		}
	}
	return fmt.Sprintf("%s-%s", string(prefix), hex.EncodeToString(sum[:])[:16])
}

func labelSafe(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.'
}

// Labels are the ownership labels of objects ALM creates for ov.
func Labels(ov *operatorsv1alpha1.OperatorVersion) map[string]string {
	return map[string]string{
		operatorsv1alpha1.LabelOwner:          LabelValue(ov.Name),
		operatorsv1alpha1.LabelOwnerNamespace: ov.Namespace,
		operatorsv1alpha1.LabelAppType:        LabelValue(ov.Spec.PackageName),
	}
}

// Selector selects the objects labelled as owned by ov.
func Selector(ov *operatorsv1alpha1.OperatorVersion) labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		operatorsv1alpha1.LabelOwner:          LabelValue(ov.Name),
		operatorsv1alpha1.LabelOwnerNamespace: ov.Namespace,
	})
}

// IsOwnedBy says whether obj carries ov's owner labels.
func IsOwnedBy(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) bool {
	l := obj.GetLabels()
	return l[operatorsv1alpha1.LabelOwner] == LabelValue(ov.Name) && l[operatorsv1alpha1.LabelOwnerNamespace] == ov.Namespace
}

// Reference is an ownerReference to ov.
func Reference(ov *operatorsv1alpha1.OperatorVersion, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         operatorsv1alpha1.GroupVersion.String(),
		Kind:               "OperatorVersion",
		Name:               ov.Name,
		UID:                ov.UID,
		Controller:         ptr.To(controller),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// Referable says whether obj can carry an ownerReference to ov: only namespaced objects in ov's namespace can.
func Referable(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) bool {
	return obj.GetNamespace() != "" && obj.GetNamespace() == ov.Namespace
}

// Claim makes a new object owned by ov: ownership labels and, where possible, a controller ownerReference.
func Claim(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) {
	setLabels(obj, Labels(ov))
	if Referable(obj, ov) {
		obj.SetOwnerReferences([]metav1.OwnerReference{Reference(ov, true)})
	}
}

// CoOwn adds ov as an additional, non-controller owner of an object another version of the same package owns, so
// that the object can never be left without an owner during an upgrade. Labels stay with the current owner until
// adoption. It returns whether obj changed.
func CoOwn(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) bool {
	if !Referable(obj, ov) || hasRef(obj, ov) {
		return false
	}
	controller := metav1.GetControllerOf(obj) == nil
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), Reference(ov, controller)))
	return true
}

// Take gives ov its ownership of updated, the metadata of existing that ov's install step is about to write: claimed
// when ov owns existing or no version does (a CRD created for a requirement, or released by an older version; this
// also restores labels or a reference someone removed), keeping the other owners' references. When another version
// of the package owns it, ov is added as a further owner only if coOwn (the step writes the object anyway, because
// its content changes: a Deployment a new version rolls out then reaches that version's watch); otherwise the object
// stays as it is until the hand-over moves it in one write, which adds ov before it removes the old version.
func Take(existing, updated metav1.Object, ov *operatorsv1alpha1.OperatorVersion, coOwn bool) {
	if IsOwnedBy(existing, ov) || existing.GetLabels()[operatorsv1alpha1.LabelOwner] == "" {
		Claim(updated, ov)
		updated.SetOwnerReferences(mergeRefs(existing, updated))
		return
	}
	if coOwn {
		CoOwn(updated, ov)
	}
}

// mergeRefs keeps the other owners' references of existing and ov's reference from updated.
func mergeRefs(existing, updated metav1.Object) []metav1.OwnerReference {
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

// HandOver moves obj to `to` from the versions it replaces, in the order the adoption loop prescribes: `to` is
// added as an owner first, then made the controller, then the references of every replaced version are removed
// (a chain v1 <- failed v2 <- v3 leaves both v1's and v2's on a shared object); the labels follow. The result is
// written in one update, so no observer ever sees the object without an owner.
func HandOver(obj metav1.Object, to *operatorsv1alpha1.OperatorVersion, from ...*operatorsv1alpha1.OperatorVersion) {
	CoOwn(obj, to)
	replaced := map[types.UID]bool{}
	for _, f := range from {
		replaced[f.UID] = true
	}
	refs := obj.GetOwnerReferences()
	out := refs[:0]
	for _, ref := range refs {
		switch {
		case ref.UID == to.UID:
			ref.Controller = ptr.To(true)
		case replaced[ref.UID]:
			continue
		case ref.Controller != nil && *ref.Controller:
			ref.Controller = ptr.To(false) // there can be only one controller
		}
		out = append(out, ref)
	}
	obj.SetOwnerReferences(out)
	setLabels(obj, Labels(to))
}

// Release drops ov's ownership of obj without giving it to anyone: used for CRDs, which ALM never deletes, when
// the new version no longer ships them. The package label stays so that the CRD loop still knows who provides it.
func Release(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) {
	l := obj.GetLabels()
	delete(l, operatorsv1alpha1.LabelOwner)
	delete(l, operatorsv1alpha1.LabelOwnerNamespace)
	obj.SetLabels(l)
	refs := obj.GetOwnerReferences()
	out := refs[:0]
	for _, ref := range refs {
		if ref.UID != ov.UID {
			out = append(out, ref)
		}
	}
	obj.SetOwnerReferences(out)
}

func hasRef(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == ov.UID {
			return true
		}
	}
	return false
}

func setLabels(obj metav1.Object, add map[string]string) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range add {
		l[k] = v
	}
	obj.SetLabels(l)
}

// Owned lists, by label query, the objects ov owns: every kind in Kinds and in ov's inventory. Namespaced kinds
// are searched in ov's namespace only. Only metadata is read. It is for a cache, where a query costs no request;
// a query of the API server asks only about the kinds ov can own (OwnedOf).
func Owned(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, ov *operatorsv1alpha1.OperatorVersion) ([]metav1.PartialObjectMetadata, error) {
	return owned(ctx, c, mapper, ov, nil, false)
}

// OwnedOf is Owned of the given kinds and those in ov's inventory; kinds nil: every kind in Kinds. The kinds are
// what ov can own (installer.OwnableKinds: the kinds of its plan), so that a query of the API server, which must
// not miss anything ov owns, costs one list per kind ov installs rather than one per kind ALM knows.
func OwnedOf(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, ov *operatorsv1alpha1.OperatorVersion, kinds []schema.GroupVersionKind) ([]metav1.PartialObjectMetadata, error) {
	return owned(ctx, c, mapper, ov, kinds, false)
}

// OwnedClusterScoped is OwnedOf of the cluster-scoped kinds only (what Kubernetes garbage collection does not
// delete with ov).
func OwnedClusterScoped(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, ov *operatorsv1alpha1.OperatorVersion, kinds []schema.GroupVersionKind) ([]metav1.PartialObjectMetadata, error) {
	return owned(ctx, c, mapper, ov, kinds, true)
}

func owned(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, ov *operatorsv1alpha1.OperatorVersion, kinds []schema.GroupVersionKind, clusterOnly bool) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	for _, gvk := range kindsOf(ov, kinds) {
		recorded := inInventory(ov, gvk)
		if !recorded && unserved.recent(gvk) {
			continue
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if apimeta.IsNoMatchError(err) {
			unserved.add(gvk)
			continue // the API is not served, so nothing of this kind can exist
		}
		if err != nil {
			return nil, fmt.Errorf("mapping %s: %w", gvk, err)
		}
		namespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
		if namespaced && clusterOnly {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.MatchingLabelsSelector{Selector: Selector(ov)}}
		if namespaced {
			opts = append(opts, client.InNamespace(ov.Namespace))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing %s owned by %s/%s: %w", gvk.Kind, ov.Namespace, ov.Name, err)
		}
		for i := range list.Items {
			item := list.Items[i]
			item.SetGroupVersionKind(gvk)
			out = append(out, item)
		}
	}
	return out, nil
}

// unserved remembers for a while the kinds of Kinds whose API was not served. controller-runtime's RESTMapper
// asks discovery again on every lookup of a kind it does not know, so without it every look at what a version
// owns, in a cluster without the Prometheus operator, cost two discovery requests (BenchmarkScale's upgrades: 14.6
// per upgrade). Only kinds not in the version's inventory are skipped: what ALM created is always looked for.
var unserved = &missCache{ttl: 10 * time.Second, until: map[schema.GroupVersionKind]time.Time{}}

type missCache struct {
	ttl   time.Duration
	mu    sync.Mutex
	until map[schema.GroupVersionKind]time.Time
}

func (m *missCache) recent(gvk schema.GroupVersionKind) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Now().Before(m.until[gvk])
}

func (m *missCache) add(gvk schema.GroupVersionKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.until[gvk] = time.Now().Add(m.ttl)
}

// inInventory says whether ov's inventory records an object of kind gvk.
func inInventory(ov *operatorsv1alpha1.OperatorVersion, gvk schema.GroupVersionKind) bool {
	for _, o := range ov.Status.Owned {
		if o.Group == gvk.Group && o.Version == gvk.Version && o.Kind == gvk.Kind {
			return true
		}
	}
	return false
}

// kindsOf is kinds (nil: Kinds) plus the kinds in ov's inventory, without repeats.
func kindsOf(ov *operatorsv1alpha1.OperatorVersion, kinds []schema.GroupVersionKind) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	add := func(gvk schema.GroupVersionKind) {
		if !seen[gvk] {
			seen[gvk] = true
			out = append(out, gvk)
		}
	}
	if kinds == nil {
		kinds = Kinds
	}
	for _, gvk := range kinds {
		add(gvk)
	}
	for _, o := range ov.Status.Owned {
		add(schema.GroupVersionKind{Group: o.Group, Version: o.Version, Kind: o.Kind})
	}
	return out
}
