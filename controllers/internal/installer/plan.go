// Package installer turns an OperatorVersion's install strategy and bundle objects into Kubernetes objects, applies
// them with ALM's ownership, checks that owned CRD updates are safe and that Deployments are rolled out. The
// Install and Upgrade loops both install through it; the decisions are pure functions.
package installer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/controllers/internal/operatorenv"
)

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// InvalidError is an install strategy or bundle object ALM cannot install. Retrying does not help: the
// OperatorVersion fails and a newer version has to fix it.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// Scope answers whether a kind is namespaced and whether its API is served at all.
type Scope func(gvk schema.GroupVersionKind) (namespaced, served bool, err error)

// Plan is everything an OperatorVersion installs, in apply order.
type Plan struct {
	// CRDs are the CRDs the version owns (from spec.objects).
	CRDs []*unstructured.Unstructured
	// Objects are ServiceAccounts, RBAC, the bundle's other objects and Deployments, in that order.
	Objects []*unstructured.Unstructured
	// Deployments are the names of the Deployments that must be rolled out.
	Deployments []string
	// Skipped are optional objects whose API is not served, as "Kind/name".
	Skipped []string

	webhooks *webhookPlan
}

// All returns the CRDs and the other objects.
func (p *Plan) All() []*unstructured.Unstructured {
	return append(append([]*unstructured.Unstructured{}, p.CRDs...), p.Objects...)
}

// Declares says whether the plan contains an object with this kind, namespace and name.
func (p *Plan) Declares(gvk schema.GroupVersionKind, namespace, name string) bool {
	for _, o := range p.All() {
		if o.GroupVersionKind().GroupKind() == gvk.GroupKind() && o.GetNamespace() == namespace && o.GetName() == name {
			return true
		}
	}
	return false
}

// NewPlan builds the objects ov installs. It is pure apart from scope, and returns an InvalidError for a strategy
// or bundle object ALM cannot install, naming the field or object. A ServiceAccount the bundle ships under the name
// of one the install strategy uses is merged with it: it is planned once, in the ServiceAccounts' place, with the
// bundle's labels, annotations and imagePullSecrets. Bundle objects are installed in ov's namespace whatever their
// metadata.namespace says. The hostile-input policy is checked on the plan afterwards (CheckPolicy, with the opt-ins
// of a cluster admin's objects: Installer.policy).
func NewPlan(ov *operatorsv1alpha1.OperatorVersion, scope Scope) (*Plan, error) {
	strategy := ov.Spec.Install
	if strategy.StrategyName != opv1alpha1.InstallStrategyNameDeployment {
		return nil, invalidf("spec.install.strategy is %q; ALM supports only %q", strategy.StrategyName, opv1alpha1.InstallStrategyNameDeployment)
	}
	spec := strategy.StrategySpec
	if len(spec.DeploymentSpecs) == 0 {
		return nil, invalidf("spec.install.spec.deployments is empty; an operator needs at least one Deployment")
	}
	objects, err := decodeObjects(ov)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	merged, err := p.addServiceAccounts(spec, ov.Namespace, objects)
	if err != nil {
		return nil, err
	}
	if err := p.addRBAC(spec, ov.Namespace, ov.Name); err != nil {
		return nil, err
	}
	if err := p.addBundleObjects(objects, merged, ov.Namespace, scope); err != nil {
		return nil, err
	}
	if err := p.addDeployments(ov); err != nil {
		return nil, err
	}
	if err := p.addWebhooks(ov); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeObjects decodes spec.objects; every one needs a name.
func decodeObjects(ov *operatorsv1alpha1.OperatorVersion) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(ov.Spec.Objects))
	for i, raw := range ov.Spec.Objects {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			return nil, invalidf("spec.objects[%d] is not a Kubernetes object: %v", i, err)
		}
		if obj.GetName() == "" {
			return nil, invalidf("spec.objects[%d] (%s) has no metadata.name", i, obj.GetKind())
		}
		out = append(out, obj)
	}
	return out, nil
}

var serviceAccountGK = schema.GroupKind{Kind: "ServiceAccount"}

// addServiceAccounts plans the ServiceAccounts the permissions name and the Deployments run as. One the bundle also
// ships is planned as the bundle has it (the two are merged); merged reports the indexes of those objects.
func (p *Plan) addServiceAccounts(spec opv1alpha1.StrategyDetailsDeployment, ns string, objects []*unstructured.Unstructured) (map[int]bool, error) {
	accounts := map[string]bool{}
	for _, perms := range [][]opv1alpha1.StrategyDeploymentPermissions{spec.Permissions, spec.ClusterPermissions} {
		for i, perm := range perms {
			if perm.ServiceAccountName == "" {
				return nil, invalidf("spec.install.spec.permissions[%d].serviceAccountName is empty", i)
			}
			accounts[perm.ServiceAccountName] = true
		}
	}
	for _, d := range spec.DeploymentSpecs {
		if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "" {
			accounts[sa] = true
		}
	}
	shipped := map[string]int{}
	for i, obj := range objects {
		if obj.GroupVersionKind().GroupKind() == serviceAccountGK && accounts[obj.GetName()] {
			shipped[obj.GetName()] = i
		}
	}
	merged := map[int]bool{}
	for _, sa := range sortedKeys(accounts) {
		if i, ok := shipped[sa]; ok {
			obj := objects[i].DeepCopy()
			clean(obj, ns)
			p.Objects = append(p.Objects, obj)
			merged[i] = true
			continue
		}
		obj := &corev1.ServiceAccount{ObjectMeta: meta(ns, sa)}
		if err := p.add(obj, corev1.SchemeGroupVersion.WithKind("ServiceAccount")); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// addRBAC plans a Role and RoleBinding per permission and a ClusterRole and ClusterRoleBinding per cluster
// permission. RBAC is per version, so the running version keeps exactly its permissions until the new one takes
// over; the old version's Roles are removed when it is replaced.
func (p *Plan) addRBAC(spec opv1alpha1.StrategyDetailsDeployment, ns, ovName string) error {
	for _, perm := range spec.Permissions {
		name := RBACName(ovName, perm.ServiceAccountName)
		role := &rbacv1.Role{ObjectMeta: meta(ns, name), Rules: perm.Rules}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: meta(ns, name),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: perm.ServiceAccountName, Namespace: ns}},
		}
		if err := p.add(role, rbacv1.SchemeGroupVersion.WithKind("Role")); err != nil {
			return err
		}
		if err := p.add(binding, rbacv1.SchemeGroupVersion.WithKind("RoleBinding")); err != nil {
			return err
		}
	}
	for _, perm := range spec.ClusterPermissions {
		name := ClusterRBACName(ns, ovName, perm.ServiceAccountName)
		role := &rbacv1.ClusterRole{ObjectMeta: meta("", name), Rules: perm.Rules}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: meta("", name),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: perm.ServiceAccountName, Namespace: ns}},
		}
		if err := p.add(role, rbacv1.SchemeGroupVersion.WithKind("ClusterRole")); err != nil {
			return err
		}
		if err := p.add(binding, rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")); err != nil {
			return err
		}
	}
	return nil
}

// addBundleObjects plans the bundle's CRDs (every one, owned or not) and its other objects, except those merged
// into the ServiceAccounts already planned.
func (p *Plan) addBundleObjects(objects []*unstructured.Unstructured, merged map[int]bool, ns string, scope Scope) error {
	for i, obj := range objects {
		gvk := obj.GroupVersionKind()
		if gvk == crdGVK {
			clean(obj, "")
			p.CRDs = append(p.CRDs, obj)
			continue
		}
		if merged[i] {
			continue
		}
		kind, ok := policy.Installable(gvk.GroupKind())
		if !ok {
			return invalidf("spec.objects[%d] is a %s (%s); ALM installs only CRDs and %s", i, gvk.Kind, gvk.GroupVersion(), policy.InstallableKindNames())
		}
		namespaced, served, err := scope(gvk)
		if err != nil {
			return err
		}
		if !served {
			if kind.Optional {
				p.Skipped = append(p.Skipped, gvk.Kind+"/"+obj.GetName())
				continue
			}
			return invalidf("spec.objects[%d] %s/%s: the API %s is not served by this cluster", i, gvk.Kind, obj.GetName(), gvk.GroupVersion())
		}
		if namespaced {
			clean(obj, ns)
		} else {
			clean(obj, "")
		}
		p.Objects = append(p.Objects, obj)
	}
	return nil
}

// addDeployments plans the Deployments, last: their pods need the ServiceAccounts, RBAC and configuration above.
// Their containers get ALM's environment (operatorenv: the OperatorVersion's name for a version with a hand-over).
func (p *Plan) addDeployments(ov *operatorsv1alpha1.OperatorVersion) error {
	for i, d := range ov.Spec.Install.StrategySpec.DeploymentSpecs {
		if d.Name == "" {
			return invalidf("spec.install.spec.deployments[%d].name is empty", i)
		}
		if len(d.Spec.Template.Spec.Containers) == 0 {
			return invalidf("spec.install.spec.deployments[%d] (%s) has no containers", i, d.Name)
		}
		dep := &appsv1.Deployment{ObjectMeta: meta(ov.Namespace, d.Name), Spec: operatorenv.Spec(ov, d.Spec)}
		dep.Labels = maps.Clone(d.Label)
		if err := p.add(dep, appsv1.SchemeGroupVersion.WithKind("Deployment")); err != nil {
			return err
		}
		p.Deployments = append(p.Deployments, d.Name)
	}
	return nil
}

func (p *Plan) add(obj runtime.Object, gvk schema.GroupVersionKind) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	p.Objects = append(p.Objects, u)
	return nil
}

// clean strips what a bundle author may have left in a manifest that must not be applied, and sets the namespace.
func clean(obj *unstructured.Unstructured, namespace string) {
	unstructured.RemoveNestedField(obj.Object, "status")
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "ownerReferences", "selfLink"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	obj.SetNamespace(namespace)
}

func meta(namespace, name string) (m metav1.ObjectMeta) {
	m.Namespace, m.Name = namespace, name
	return m
}

// RBACName is the name of the Role and RoleBinding a version gets for one ServiceAccount.
func RBACName(ovName, serviceAccount string) string {
	return shorten(ovName+"-"+serviceAccount, 253)
}

// ClusterRBACName is the name of the ClusterRole and ClusterRoleBinding a version in a namespace gets for one
// ServiceAccount; it carries the namespace because the same version may be installed in several namespaces.
func ClusterRBACName(namespace, ovName, serviceAccount string) string {
	return shorten("alm:"+namespace+":"+ovName+":"+serviceAccount, 253)
}

func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:max-17] + "-" + hex.EncodeToString(sum[:])[:16]
}

// Hash is the hash of an object's desired content, as recorded in operatorsv1alpha1.AnnotationAppliedHash.
func Hash(obj *unstructured.Unstructured) string {
	data, _ := json.Marshal(obj.Object) // maps marshal with sorted keys: deterministic
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:32]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OwnableKinds lists the kinds of the objects ov can own, for the queries that must find everything it owns (the
// GC loop's and the cleanup finalizer's, of the API server): the kinds its plan installs, built from its spec as if
// every API were served. Only the installer labels an object as owned by a version, and only an object of the
// version's plan (Apply; the hand-over gives an object to the version that declares it); the queries add the kinds
// of the version's inventory. It returns nil, every kind ALM installs, when the content is not in spec (a bundle
// image) or the plan does not build (then nothing tells what an earlier plan applied).
func OwnableKinds(ov *operatorsv1alpha1.OperatorVersion) []schema.GroupVersionKind {
	if ov.Spec.Bundle != nil && ov.Spec.Bundle.Image != "" {
		return nil
	}
	plan, err := NewPlan(ov, func(schema.GroupVersionKind) (bool, bool, error) { return true, true, nil })
	if err != nil {
		return nil
	}
	var out []schema.GroupVersionKind
	for _, o := range plan.All() {
		if gvk := o.GroupVersionKind(); !slices.Contains(out, gvk) {
			out = append(out, gvk)
		}
	}
	return out
}
