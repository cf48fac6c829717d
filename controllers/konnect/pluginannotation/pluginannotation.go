// Package pluginannotation is the loop of the konghq.com/plugins annotation, as Kong's operator has it: a
// KongService, KongRoute or KongConsumer that names KongPlugins in the annotation gets one KongPluginBinding per
// plugin, targeting it and owned by it; naming a plugin no more (or deleting the object) deletes its binding. The
// bindings are then synced to Konnect like any other.
package pluginannotation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

const (
	// Annotation names the KongPlugins (comma-separated, in the object's namespace) applied to the object.
	Annotation = "konghq.com/plugins"
	// LabelOwnerUID marks a binding made for an annotation with the annotated object's UID.
	LabelOwnerUID = "konnect.alm.dev/plugins-annotation-of"
	// LabelPlugin is the KongPlugin the binding was made for.
	LabelPlugin = "konnect.alm.dev/plugin"
	// maxNameLen is the longest name a binding gets (a label value's limit, so the name can be used in selectors).
	maxNameLen = 63
)

// targetKind says how a binding targets an annotated object of one kind.
type targetKind struct {
	name    string
	newObj  func() client.Object
	targets func(name string) *configurationv1alpha1.KongPluginBindingTargets
}

var kinds = []targetKind{
	{name: "KongService", newObj: func() client.Object { return &configurationv1alpha1.KongService{} },
		targets: func(name string) *configurationv1alpha1.KongPluginBindingTargets {
			return &configurationv1alpha1.KongPluginBindingTargets{ServiceReference: &configurationv1alpha1.TargetRefWithGroupKind{
				Name: name, Kind: "KongService", Group: configurationv1alpha1.GroupVersion.Group}}
		}},
	{name: "KongRoute", newObj: func() client.Object { return &configurationv1alpha1.KongRoute{} },
		targets: func(name string) *configurationv1alpha1.KongPluginBindingTargets {
			return &configurationv1alpha1.KongPluginBindingTargets{RouteReference: &configurationv1alpha1.TargetRefWithGroupKind{
				Name: name, Kind: "KongRoute", Group: configurationv1alpha1.GroupVersion.Group}}
		}},
	{name: "KongConsumer", newObj: func() client.Object { return &configurationv1.KongConsumer{} },
		targets: func(name string) *configurationv1alpha1.KongPluginBindingTargets {
			return &configurationv1alpha1.KongPluginBindingTargets{ConsumerReference: &configurationv1alpha1.TargetRef{Name: name}}
		}},
}

// Reconciler makes the bindings of one kind's annotations.
type Reconciler struct {
	client.Client
	Scheme *runtime.Scheme
	kind   targetKind
}

// Setup registers the loop of each annotated kind with mgr.
func Setup(mgr manager.Manager, opts controller.Options) error {
	for _, k := range kinds {
		r := &Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), kind: k}
		err := ctrl.NewControllerManagedBy(mgr).Named("plugins-annotation-"+strings.ToLower(k.name)).
			For(k.newObj()).
			Watches(&configurationv1alpha1.KongPluginBinding{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), k.newObj(), handler.OnlyControllerOwner())).
			WithOptions(opts).Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// Reconcile: get -> the bindings the annotation asks for -> create, update or delete the ones that differ. An
// object being deleted (or gone) asks for none.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.newObj()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	have := &configurationv1alpha1.KongPluginBindingList{}
	if err := r.List(ctx, have, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{LabelOwnerUID: string(obj.GetUID())}); err != nil {
		return ctrl.Result{}, err
	}
	var want []string
	if obj.GetDeletionTimestamp().IsZero() {
		want = Plugins(obj.GetAnnotations()[Annotation])
	}
	for i := range have.Items {
		b := &have.Items[i]
		if !slices.Contains(want, b.Labels[LabelPlugin]) {
			ctrl.LoggerFrom(ctx).V(1).Info("deleting the binding of a plugin no longer named", "binding", klog.KObj(b))
			if err := r.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting %s: %w", klog.KObj(b), err)
			}
		}
	}
	for _, plugin := range want {
		if err := r.ensure(ctx, obj, plugin, have.Items); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// ensure creates the binding of plugin for obj, or brings the existing one to the declared spec.
func (r *Reconciler) ensure(ctx context.Context, obj client.Object, plugin string, have []configurationv1alpha1.KongPluginBinding) error {
	want := r.binding(obj, plugin)
	if err := controllerutil.SetControllerReference(obj, want, r.Scheme); err != nil {
		return err
	}
	for i := range have {
		b := &have[i]
		if b.Labels[LabelPlugin] != plugin {
			continue
		}
		if equality.Semantic.DeepEqual(b.Spec, want.Spec) {
			return nil
		}
		b.Spec = want.Spec
		return client.IgnoreNotFound(r.Update(ctx, b))
	}
	err := r.Create(ctx, want)
	if apierrors.IsAlreadyExists(err) {
		// A binding of that name that is not ours (no owner label): it is the user's, left alone.
		ctrl.LoggerFrom(ctx).Info("a KongPluginBinding with the name of the annotation's binding exists and is not the annotation's; left alone",
			"binding", klog.KObj(want))
		return nil
	}
	return err
}

// binding is the KongPluginBinding the annotation of obj asks for plugin.
func (r *Reconciler) binding(obj client.Object, plugin string) *configurationv1alpha1.KongPluginBinding {
	return &configurationv1alpha1.KongPluginBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name: BindingName(r.kind.name, obj.GetName(), plugin), Namespace: obj.GetNamespace(),
			Labels: map[string]string{LabelOwnerUID: string(obj.GetUID()), LabelPlugin: plugin},
		},
		Spec: configurationv1alpha1.KongPluginBindingSpec{
			PluginReference: configurationv1alpha1.PluginRef{Name: plugin},
			Targets:         r.kind.targets(obj.GetName()),
			Scope:           configurationv1alpha1.KongPluginBindingScopeOnlyTargets,
		},
	}
}

// Plugins reads the annotation's plugin names: comma-separated, trimmed, without empty names or duplicates, sorted.
// Names that cannot be a KongPlugin's (or a label value) are dropped.
func Plugins(value string) []string {
	var out []string
	for _, p := range strings.Split(value, ",") {
		p = strings.TrimSpace(p)
		if p != "" && len(p) <= maxNameLen && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// BindingName is the name of the binding of plugin for the object name of kind: <name>-<plugin>-<kind>, or when that
// is longer than 63 characters, a cut of it ending in a hash of the whole.
func BindingName(kind, name, plugin string) string {
	full := strings.ToLower(fmt.Sprintf("%s-%s-%s", name, plugin, strings.TrimPrefix(kind, "Kong")))
	if len(full) <= maxNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	suffix := hex.EncodeToString(sum[:])[:10]
	return strings.TrimRight(full[:maxNameLen-len(suffix)-1], "-.") + "-" + suffix
}
