package alm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// kind is a kind ALM installs for a harness.Demo operator, and whether it is namespaced.
type kind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
}

var (
	serviceAccount     = kind{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, true}
	service            = kind{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, true}
	configMap          = kind{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true}
	secret             = kind{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true}
	deployment         = kind{appsv1.SchemeGroupVersion.WithKind("Deployment"), true}
	role               = kind{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, true}
	roleBinding        = kind{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, true}
	clusterRole        = kind{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false}
	clusterRoleBinding = kind{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, false}
	crd                = kind{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, false}

	// scanned are the kinds searched for leftovers and duplicates.
	scanned = []kind{serviceAccount, service, configMap, secret, deployment, role, roleBinding, clusterRole, clusterRoleBinding, crd}
)

// ref names one object.
type ref struct {
	kind kind
	name string
}

func (r ref) String() string { return r.kind.gvk.Kind + " " + r.name }

// objectsOf are the objects version of the run's package installs, as installer.NewPlan plans a harness.Demo (the
// RBAC names follow installer.RBACName and installer.ClusterRBACName).
func (x *run) objectsOf(version string) []ref {
	ov, sa := x.ovName(version), x.pkg+"-operator"
	return []ref{
		{serviceAccount, sa}, {deployment, sa}, {service, x.pkg + "-metrics"}, {configMap, x.pkg + "-config"},
		{configMap, onlyIn(version)},
		{role, ov + "-" + sa}, {roleBinding, ov + "-" + sa},
		{clusterRole, "alm:" + x.ns + ":" + ov + ":" + sa}, {clusterRoleBinding, "alm:" + x.ns + ":" + ov + ":" + sa},
		{crd, "widgets." + x.pkg + ".example.com"},
	}
}

// shared are the objects every version declares: an upgrade adopts them, so they must keep their UID.
func (x *run) shared() []ref {
	sa := x.pkg + "-operator"
	return []ref{{serviceAccount, sa}, {deployment, sa}, {service, x.pkg + "-metrics"}, {configMap, x.pkg + "-config"},
		{crd, "widgets." + x.pkg + ".example.com"}}
}

func (x *run) get(ctx context.Context, r ref) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(r.kind.gvk)
	key := client.ObjectKey{Name: r.name}
	if r.kind.namespaced {
		key.Namespace = x.ns
	}
	return obj, x.c.Get(ctx, key, obj)
}

// uids reads the UIDs of refs.
func (x *run) uids(ctx context.Context, refs []ref) (map[ref]types.UID, error) {
	out := map[ref]types.UID{}
	for _, r := range refs {
		obj, err := x.get(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		out[r] = obj.UID
	}
	return out, nil
}

// versions returns the package's OperatorVersions in the run's namespace, by name.
func (x *run) versions(ctx context.Context) (map[string]*operatorsv1alpha1.OperatorVersion, error) {
	list := &operatorsv1alpha1.OperatorVersionList{}
	if err := x.c.List(ctx, list, client.InNamespace(x.ns)); err != nil {
		return nil, err
	}
	out := map[string]*operatorsv1alpha1.OperatorVersion{}
	for i := range list.Items {
		if list.Items[i].Spec.PackageName == x.pkg {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// check is nil once the run is in the end state of an install of (or upgrade to) version: the AppType reports
// version installed; exactly one OperatorVersion of the package, version's, Succeeded; every object version
// declares exists, not being deleted, labelled for it and (namespaced) with it as its only, controlling owner; the
// Deployment runs version's image; the objects in kept have their recorded UIDs; and no other object of the package
// exists (no duplicate, no object of an old version left, no object referring to another OperatorVersion), none
// stuck on a finalizer. It reports every violation it finds.
func (x *run) check(ctx context.Context, version string, kept map[ref]types.UID) error {
	at := &operatorsv1alpha1.AppType{}
	if err := x.c.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: x.pkg}, at); err != nil {
		return err
	}
	var errs []error
	if at.Status.InstalledVersion != version {
		errs = append(errs, fmt.Errorf("AppType reports %q installed, want %s", at.Status.InstalledVersion, version))
	}
	ovs, err := x.versions(ctx)
	if err != nil {
		return err
	}
	ov := ovs[x.ovName(version)]
	var names []string
	for name, other := range ovs {
		names = append(names, fmt.Sprintf("%s (%s%s)", name, other.Status.Phase, deleting(&other.ObjectMeta)))
	}
	sort.Strings(names)
	switch {
	case len(ovs) != 1 || ov == nil:
		errs = append(errs, fmt.Errorf("OperatorVersions %v, want exactly %s", names, x.ovName(version)))
	case ov.Status.Phase != operatorsv1alpha1.PhaseSucceeded || ov.DeletionTimestamp != nil:
		errs = append(errs, fmt.Errorf("OperatorVersion %s is %s%s: %s", ov.Name, ov.Status.Phase, deleting(&ov.ObjectMeta), ov.Status.Message))
	}
	if ov == nil {
		return errors.Join(errs...)
	}
	errs = append(errs, x.checkObjects(ctx, ov, version, kept)...)
	errs = append(errs, x.checkLeftovers(ctx, ov, version)...)
	return errors.Join(errs...)
}

// checkObjects checks the objects version declares: present, owned by ov alone, with their kept UIDs.
func (x *run) checkObjects(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, version string, kept map[ref]types.UID) []error {
	var errs []error
	for _, r := range x.objectsOf(version) {
		obj, err := x.get(ctx, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (lost)", r, err))
			continue
		}
		if obj.DeletionTimestamp != nil {
			errs = append(errs, fmt.Errorf("%s is being deleted (finalizers %v)", r, obj.Finalizers))
		}
		if l := obj.Labels; l[operatorsv1alpha1.LabelOwner] != ov.Name || l[operatorsv1alpha1.LabelOwnerNamespace] != x.ns {
			errs = append(errs, fmt.Errorf("%s is labelled for %s/%s, want %s/%s", r, l[operatorsv1alpha1.LabelOwnerNamespace],
				l[operatorsv1alpha1.LabelOwner], x.ns, ov.Name))
		}
		if c := metav1.GetControllerOf(obj); r.kind.namespaced && (len(obj.OwnerReferences) != 1 || c == nil || c.UID != ov.UID) {
			errs = append(errs, fmt.Errorf("%s has ownerReferences %s, want %s alone as its controller", r, refsText(obj.OwnerReferences), ov.Name))
		}
		if uid, ok := kept[r]; ok && obj.UID != uid {
			errs = append(errs, fmt.Errorf("%s was recreated: UID %s, was %s before the upgrade", r, obj.UID, uid))
		}
	}
	d := &appsv1.Deployment{}
	if err := x.c.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: x.pkg + "-operator"}, d); err == nil {
		if img := d.Spec.Template.Spec.Containers[0].Image; img != x.image(version) {
			errs = append(errs, fmt.Errorf("the Deployment runs %s, want %s", img, x.image(version)))
		}
	}
	return errs
}

// checkLeftovers looks for objects of the package that version does not declare (duplicates, objects of an old
// version), objects that refer to another OperatorVersion (orphans once it is gone), and objects stuck deleting.
func (x *run) checkLeftovers(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, version string) []error {
	want := map[ref]bool{}
	for _, r := range x.objectsOf(version) {
		want[r] = true
	}
	var errs []error
	for _, k := range scanned {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		opts := []client.ListOption{client.InNamespace(x.ns)}
		if !k.namespaced {
			opts = []client.ListOption{client.MatchingLabels{operatorsv1alpha1.LabelAppType: x.pkg}}
		}
		if err := x.c.List(ctx, list, opts...); err != nil {
			return append(errs, fmt.Errorf("listing %s: %w", k.gvk.Kind, err))
		}
		for i := range list.Items {
			obj := &list.Items[i]
			r := ref{k, obj.Name}
			foreign := otherVersionRefs(obj, ov)
			ours := obj.Labels[operatorsv1alpha1.LabelAppType] == x.pkg || obj.Labels[operatorsv1alpha1.LabelOwnerNamespace] == x.ns || len(foreign) > 0
			switch {
			case !ours:
			case !want[r]:
				errs = append(errs, fmt.Errorf("%s (owner %s, ownerReferences %s) is left over: %s does not declare it",
					r, obj.Labels[operatorsv1alpha1.LabelOwner], refsText(obj.OwnerReferences), ov.Name))
			case len(foreign) > 0:
				errs = append(errs, fmt.Errorf("%s still refers to %s", r, strings.Join(foreign, ", ")))
			case obj.DeletionTimestamp != nil:
				errs = append(errs, fmt.Errorf("%s is stuck deleting (finalizers %v)", r, obj.Finalizers))
			}
		}
	}
	return errs
}

// otherVersionRefs are obj's ownerReferences to OperatorVersions other than ov.
func otherVersionRefs(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) []string {
	var out []string
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == "OperatorVersion" && r.UID != ov.UID {
			out = append(out, fmt.Sprintf("OperatorVersion %s (uid %s)", r.Name, r.UID))
		}
	}
	return out
}

func refsText(refs []metav1.OwnerReference) string {
	parts := make([]string, 0, len(refs))
	for _, r := range refs {
		parts = append(parts, fmt.Sprintf("%s %s controller=%v", r.Kind, r.Name, r.Controller != nil && *r.Controller))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func deleting(m *metav1.ObjectMeta) string {
	if m.DeletionTimestamp == nil {
		return ""
	}
	return fmt.Sprintf(", deleting, finalizers %v", m.Finalizers)
}

// phaseNow says where the install of (from == "") or upgrade from `from` to `to` is: a coarse phase, for the
// report's spread, and the same with counts, for the log.
func (x *run) phaseNow(ctx context.Context, from, to string) (string, string) {
	ovs, err := x.versions(ctx)
	if err != nil {
		return "unknown", err.Error()
	}
	ov := ovs[x.ovName(to)]
	if ov == nil {
		return "catalog/resolution (no new OperatorVersion yet)", ""
	}
	switch ov.Status.Phase {
	case "", operatorsv1alpha1.PhasePending:
		return "new OperatorVersion created, not ready", string(ov.Status.Phase)
	case operatorsv1alpha1.PhaseInstallReady:
		applied := x.countOwned(ctx, ov, to, false)
		if applied == 0 {
			return "InstallReady, nothing applied", ""
		}
		return "applying objects", fmt.Sprintf("%d of %d objects applied", applied, len(x.objectsOf(to)))
	case operatorsv1alpha1.PhaseInstalling:
		return "Installing (rollout)", ""
	case operatorsv1alpha1.PhaseSucceeded:
	default:
		return string(ov.Status.Phase), ov.Status.Message
	}
	old := ovs[x.ovName(from)]
	switch {
	case from == "":
		return "Succeeded (AppType status, events)", ""
	case old == nil:
		return "old version collected (cleanup, AppType status)", ""
	case old.DeletionTimestamp != nil:
		return "old version deleting (finalizer)", ""
	case old.Status.Phase == operatorsv1alpha1.PhaseReplacing:
		return "old version Replacing (waiting for GC)", ""
	}
	handed := x.countOwned(ctx, ov, to, true)
	return "adopting (handing objects over)", fmt.Sprintf("%d of %d objects labelled for the new version", handed, len(x.objectsOf(to)))
}

// countOwned counts the objects of version that exist and refer to ov (labelled, with labelled: true).
func (x *run) countOwned(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, version string, labelled bool) int {
	n := 0
	for _, r := range x.objectsOf(version) {
		obj, err := x.get(ctx, r)
		if err != nil {
			continue
		}
		isLabelled := obj.Labels[operatorsv1alpha1.LabelOwner] == ov.Name
		hasRef := slices.ContainsFunc(obj.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == ov.UID })
		if isLabelled || (!labelled && (hasRef || !r.kind.namespaced)) {
			n++
		}
	}
	return n
}
