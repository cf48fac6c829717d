// Package slim makes the objects ALM's informer caches hold smaller: the transform drops managedFields (no loop
// reads them) and stores each repeated metadata string once. Decoding gives every object its own copy of strings
// that thousands of objects share — label and annotation keys, the owner's name, UID, kind and API version, the
// namespace, condition types, reasons and messages — and at a thousand installs those copies are megabytes.
package slim

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Transform strips managedFields and interns the shared strings of an object's metadata and, for ALM's own kinds,
// of its status conditions; the OperatorVersions of one bundle share one copy of its content (shareContent). Anything that is not an object (e.g. a deleted object's final state) passes unchanged.
func Transform() toolscache.TransformFunc {
	return func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil {
			Metadata(obj)
		}
		switch o := in.(type) {
		case *operatorsv1alpha1.OperatorVersion:
			o.Status.Conditions = exact(o.Status.Conditions)
			conditions(o.Status.Conditions)
			o.Status.Owned = exact(o.Status.Owned)
			owned(o.Status.Owned)
			operatorVersion(o)
			shareContent(o)
		case *operatorsv1alpha1.AppType:
			o.Status.Conditions = exact(o.Status.Conditions)
			conditions(o.Status.Conditions)
			o.Status.Resolution = exact(o.Status.Resolution)
			appType(o)
		case *operatorsv1alpha1.CatalogSource:
			conditions(o.Status.Conditions)
		}
		return in, nil
	}
}

// Metadata strips obj's managedFields and interns its namespace, name, labels (objects with the same labels share
// one map: the objects of one install all carry its package and owner), annotation keys, owner references and
// finalizers. Its own UID and resourceVersion are its alone and are left as they are.
func Metadata(obj metav1.Object) {
	if obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	obj.SetNamespace(intern(obj.GetNamespace()))
	obj.SetName(intern(obj.GetName()))
	if l := obj.GetLabels(); len(l) > 0 {
		obj.SetLabels(labelSet(l))
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		out := make(map[string]string, len(a))
		for k, v := range a {
			out[intern(k)] = v // values (hashes, last-applied content) are seldom shared
		}
		obj.SetAnnotations(out)
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind, refs[i].Name = intern(refs[i].APIVersion), intern(refs[i].Kind), intern(refs[i].Name)
			refs[i].UID = types.UID(intern(string(refs[i].UID)))
			refs[i].Controller, refs[i].BlockOwnerDeletion = sharedBool(refs[i].Controller), sharedBool(refs[i].BlockOwnerDeletion)
		}
		obj.SetOwnerReferences(refs)
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = intern(f[i])
		}
		obj.SetFinalizers(f)
	}
}

// exact returns s in an array of its length: decoding grows a list by doubling its array, so that one of 7 owned
// objects or 3 conditions holds room for 8 or 4, for as long as the cache holds the object.
func exact[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// sharedBool returns a pointer to a true or false that every cached object shares, for the *bool fields decoding
// gives each object one of (an owner reference's controller and blockOwnerDeletion). Readers get copies of cached
// objects, so none writes through it.
func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}

var sharedTrue, sharedFalse = true, false

// owned interns the group, version, kind, namespace and name of the objects an OperatorVersion owns: every install
// of a bundle owns the same kinds, of the same names. Their UIDs are theirs alone.
func owned(objs []operatorsv1alpha1.OwnedObject) {
	for i := range objs {
		o := &objs[i]
		o.Group, o.Version, o.Kind, o.Namespace = intern(o.Group), intern(o.Version), intern(o.Kind), intern(o.Namespace)
		o.Name = intern(o.Name)
	}
}

// operatorVersion interns the strings the OperatorVersions of one bundle share, in every namespace it is installed
// in: its package, channel, the version it replaces, its catalog, its ServiceAccount; and the phase and reason of
// their status.
func operatorVersion(ov *operatorsv1alpha1.OperatorVersion) {
	s := &ov.Spec
	s.PackageName, s.Replaces, s.Channel, s.SkipRange = intern(s.PackageName), intern(s.Replaces), intern(s.Channel), intern(s.SkipRange)
	s.ServiceAccountName, s.DisplayName = intern(s.ServiceAccountName), intern(s.DisplayName)
	if s.Source != nil {
		s.Source.Name, s.Source.Namespace = intern(s.Source.Name), intern(s.Source.Namespace)
	}
	ov.Status.Phase = operatorsv1alpha1.OperatorVersionPhase(intern(string(ov.Status.Phase)))
	ov.Status.Reason, ov.Status.ReplacedBy = intern(ov.Status.Reason), intern(ov.Status.ReplacedBy)
}

// appType interns the strings the AppTypes of one package share: the package, channel and catalog they ask for,
// the version installed and the one offered, and the candidates of their resolution (the same catalog answers them
// alike).
func appType(at *operatorsv1alpha1.AppType) {
	s := &at.Spec
	s.Package, s.Channel, s.Source, s.SourceNamespace = intern(s.Package), intern(s.Channel), intern(s.Source), intern(s.SourceNamespace)
	s.VersionRange, s.ServiceAccountName = intern(s.VersionRange), intern(s.ServiceAccountName)
	st := &at.Status
	st.InstalledVersion, st.InstalledOperatorVersion = intern(st.InstalledVersion), intern(st.InstalledOperatorVersion)
	st.AvailableUpgrade = intern(st.AvailableUpgrade)
	for i := range st.Resolution {
		c := &st.Resolution[i]
		c.Name, c.Version, c.Source, c.Reason = intern(c.Name), intern(c.Version), intern(c.Source), intern(c.Reason)
	}
}

func conditions(cs []metav1.Condition) {
	for i := range cs {
		cs[i].Type, cs[i].Reason, cs[i].Message = intern(cs[i].Type), intern(cs[i].Reason), intern(cs[i].Message)
		cs[i].Status = metav1.ConditionStatus(intern(string(cs[i].Status)))
	}
}

// DeploymentConditions interns the type, status, reason and message of a Deployment's conditions: the Deployments
// of one bundle, in every namespace, report the same ones (their ReplicaSets are named alike).
func DeploymentConditions(cs []appsv1.DeploymentCondition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Status = appsv1.DeploymentConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason, c.Message = intern(c.Reason), intern(c.Message)
	}
}
