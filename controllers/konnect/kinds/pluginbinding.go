package kinds

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// PluginBinding is the Kind of KongPluginBinding: the Konnect plugin entity, with its KongPlugin's configuration,
// scoped to the binding's targets or global in its control plane.
func PluginBinding() entity.Kind[*configurationv1alpha1.KongPluginBinding] {
	return entity.Kind[*configurationv1alpha1.KongPluginBinding]{Mapping: bindingMapping{}, Hashed: hashedPlugin,
		Follows: []entity.Follow{{Target: &corev1.Secret{}, Map: bindingsReadingSecret}}}
}

// bindingsReadingSecret finds the bindings whose KongPlugin reads its configuration from the Secret s, so that a
// change of the Secret reaches Konnect at once.
func bindingsReadingSecret(ctx context.Context, c client.Reader, s client.Object) []types.NamespacedName {
	plugins := &configurationv1.KongPluginList{}
	if err := c.List(ctx, plugins, client.InNamespace(s.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var keys []types.NamespacedName
	for _, kp := range plugins.Items {
		if kp.ConfigFrom == nil || kp.ConfigFrom.SecretValue.Secret != s.GetName() {
			continue
		}
		bindings := &configurationv1alpha1.KongPluginBindingList{}
		if err := c.List(ctx, bindings, client.InNamespace(kp.Namespace), client.MatchingFields{indexPluginRef: kp.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		for _, b := range bindings.Items {
			keys = append(keys, client.ObjectKeyFromObject(&b))
		}
	}
	return keys
}

// bindingMapping adapts KongPluginBinding.
type bindingMapping struct{}

func (bindingMapping) Name() string                { return "KongPluginBinding" }
func (bindingMapping) Type() konnectapi.EntityType { return konnectapi.TypePlugin }
func (bindingMapping) New() *configurationv1alpha1.KongPluginBinding {
	return &configurationv1alpha1.KongPluginBinding{}
}
func (bindingMapping) NewList() client.ObjectList {
	return &configurationv1alpha1.KongPluginBindingList{}
}
func (bindingMapping) Items(l client.ObjectList) []*configurationv1alpha1.KongPluginBinding {
	return kindbase.Pointers(l.(*configurationv1alpha1.KongPluginBindingList).Items)
}

// Managed: every binding is for Konnect, unless its controlPlaneRef says otherwise.
func (bindingMapping) Managed(b *configurationv1alpha1.KongPluginBinding) bool {
	return b.Spec.ControlPlaneRef == nil || b.Spec.ControlPlaneRef.ForKonnect()
}

// target is one of a binding's targets: the scope field of the plugin body, its condition and what it names.
type target struct {
	field, condition, kind, name string
	// read returns the target's Konnect ID and control plane ID ("" when not in Konnect or being deleted).
	read func(ctx context.Context, c client.Reader, key types.NamespacedName) (id, cpID string, err error)
}

// targetsOf lists the four targets, with an empty name for those the binding does not set.
func targetsOf(b *configurationv1alpha1.KongPluginBinding) []target {
	ts := []target{
		{field: "service", condition: konnectv1alpha1.ConditionKongServiceRefValid, kind: "KongService", read: readTarget(&configurationv1alpha1.KongService{}, func(o client.Object) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
			return o.(*configurationv1alpha1.KongService).Status.Konnect
		})},
		{field: "route", condition: konnectv1alpha1.ConditionKongRouteRefValid, kind: "KongRoute", read: readTarget(&configurationv1alpha1.KongRoute{}, func(o client.Object) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
			if k := o.(*configurationv1alpha1.KongRoute).Status.Konnect; k != nil {
				return &k.KonnectEntityStatusWithControlPlaneRef
			}
			return nil
		})},
		{field: "consumer", condition: konnectv1alpha1.ConditionKongConsumerRefValid, kind: "KongConsumer", read: readTarget(&configurationv1.KongConsumer{}, func(o client.Object) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
			return o.(*configurationv1.KongConsumer).Status.Konnect
		})},
		{field: "consumer_group", condition: konnectv1alpha1.ConditionKongConsumerGroupRefValid, kind: "KongConsumerGroup", read: readTarget(&configurationv1beta1.KongConsumerGroup{}, func(o client.Object) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
			return o.(*configurationv1beta1.KongConsumerGroup).Status.Konnect
		})},
	}
	if t := b.Spec.Targets; t != nil {
		if t.ServiceReference != nil {
			ts[0].name = t.ServiceReference.Name
		}
		if t.RouteReference != nil {
			ts[1].name = t.RouteReference.Name
		}
		if t.ConsumerReference != nil {
			ts[2].name = t.ConsumerReference.Name
		}
		if t.ConsumerGroupReference != nil {
			ts[3].name = t.ConsumerGroupReference.Name
		}
	}
	return ts
}

// readTarget reads a target of the type of proto, whose Konnect status status returns.
func readTarget(proto client.Object, status func(client.Object) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef) func(context.Context, client.Reader, types.NamespacedName) (string, string, error) {
	return func(ctx context.Context, c client.Reader, key types.NamespacedName) (string, string, error) {
		obj := proto.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, key, obj); err != nil {
			return "", "", client.IgnoreNotFound(err)
		}
		k := status(obj)
		if !obj.GetDeletionTimestamp().IsZero() || k == nil || k.ID == "" {
			return "", "", nil
		}
		return k.ID, k.ControlPlaneID, nil
	}
}

// Resolve: the KongPlugin, then each target (in Konnect, all in one control plane), then the control plane and its
// auth configuration. A global binding has no targets: its controlPlaneRef is its control plane.
func (k bindingMapping) Resolve(ctx context.Context, c client.Reader, b *configurationv1alpha1.KongPluginBinding) (entity.Refs, []entity.RefCheck, error) {
	pc, check, err := resolvePlugin(ctx, c, b)
	if err != nil || !check.OK {
		return entity.Refs{}, []entity.RefCheck{check}, err
	}
	checks := []entity.RefCheck{check}
	scope, targetCP := map[string]string{}, ""
	for _, t := range targetsOf(b) {
		tc := entity.RefCheck{Type: t.condition, Absent: t.name == ""}
		if t.name != "" {
			id, cpID, err := t.read(ctx, c, types.NamespacedName{Namespace: b.Namespace, Name: t.name})
			if err != nil {
				return entity.Refs{}, nil, err
			}
			switch {
			case id == "":
				tc.Message = fmt.Sprintf("%s %s/%s does not exist in Konnect yet (or is being deleted)", t.kind, b.Namespace, t.name)
			case targetCP != "" && cpID != targetCP:
				tc.Message = fmt.Sprintf("%s %s/%s is in another control plane than the binding's other targets", t.kind, b.Namespace, t.name)
			default:
				tc.OK, tc.Message = true, fmt.Sprintf("%s %s/%s exists in Konnect", t.kind, b.Namespace, t.name)
				scope[t.field], targetCP = id, cpID
			}
		}
		checks = append(checks, tc)
		if !tc.OK && !tc.Absent {
			return entity.Refs{}, checks, nil
		}
	}
	refs, cpChecks, err := k.controlPlane(ctx, c, b, targetCP)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.Scope, refs.Found = scope, pc
	return refs, append(checks, cpChecks...), nil
}

// controlPlane resolves the binding's control plane: its controlPlaneRef (which must be the targets' when it has
// targets), or else the KonnectGatewayControlPlane its targets are in.
func (bindingMapping) controlPlane(ctx context.Context, c client.Reader, b *configurationv1alpha1.KongPluginBinding, targetCP string) (entity.Refs, []entity.RefCheck, error) {
	ref := b.Spec.ControlPlaneRef
	if ref == nil && targetCP != "" {
		cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
		if err := c.List(ctx, cps, client.InNamespace(b.Namespace), client.MatchingFields{IndexControlPlaneID: targetCP}); err != nil {
			return entity.Refs{}, nil, err
		}
		if len(cps.Items) == 0 {
			return entity.Refs{}, []entity.RefCheck{{Type: konnectv1alpha1.ConditionControlPlaneRefValid,
				Message: fmt.Sprintf("the targets' control plane %s has no KonnectGatewayControlPlane in %s", targetCP, b.Namespace)}}, nil
		}
		ref = &configurationv1alpha1.ControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
			KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: cps.Items[0].Name}}
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongPluginBinding", b.Namespace, ref)
	if err != nil || targetCP == "" || refs.ControlPlaneID == "" || refs.ControlPlaneID == targetCP {
		return refs, checks, err
	}
	return entity.Refs{}, []entity.RefCheck{{Type: konnectv1alpha1.ConditionControlPlaneRefValid, Message: fmt.Sprintf(
		"controlPlaneRef names KonnectGatewayControlPlane %s but the targets are in another control plane: drop controlPlaneRef or make them match", kindbase.CPRefName(ref))}}, nil
}

// Desired is the KongPlugin's body scoped to the targets, with the binding's identity tags.
func (k bindingMapping) Desired(b *configurationv1alpha1.KongPluginBinding, refs entity.Refs) (map[string]any, error) {
	pc, ok := refs.Found.(*pluginConfig)
	if !ok {
		return nil, fmt.Errorf("KongPluginBinding %s/%s: the plugin was not resolved", b.Namespace, b.Name)
	}
	body := maps.Clone(pc.body)
	for field, id := range refs.Scope {
		body[field] = map[string]any{"id": id}
	}
	body["tags"] = kindbase.StringsToAny(entity.IdentityTags(k.Name(), b, nil))
	return body, nil
}

func (bindingMapping) DriftKeys() []string { return nil }

func (bindingMapping) Conditions(b *configurationv1alpha1.KongPluginBinding) *[]metav1.Condition {
	return &b.Status.Conditions
}

func (bindingMapping) State(b *configurationv1alpha1.KongPluginBinding) entity.State {
	return kindbase.StateInControlPlane(b.Status.Konnect, b.Status.SyncStatus)
}

func (bindingMapping) SetState(b *configurationv1alpha1.KongPluginBinding, st entity.State) {
	b.Status.Konnect = kindbase.StatusInControlPlane(st)
	b.Status.SyncStatus = st.Sync
}

func (k bindingMapping) DeletionScope(ctx context.Context, c client.Reader, b *configurationv1alpha1.KongPluginBinding, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	return kindbase.DeletionScopeInControlPlane(ctx, c, b, st, k.Resolve)
}

// Indexes: the KongPlugin, each target kind and the control plane re-reconcile the bindings that name them.
func (bindingMapping) Indexes() []entity.RefIndex {
	binding := func(o client.Object) *configurationv1alpha1.KongPluginBinding {
		return o.(*configurationv1alpha1.KongPluginBinding)
	}
	byTarget := func(field string, proto client.Object, kind string) entity.RefIndex {
		return entity.RefIndex{Field: "konnect.binding." + field, Target: proto, Extract: func(o client.Object) []string {
			for _, t := range targetsOf(binding(o)) {
				if t.kind == kind && t.name != "" {
					return []string{t.name}
				}
			}
			return nil
		}}
	}
	return []entity.RefIndex{
		{Field: indexPluginRef, Target: &configurationv1.KongPlugin{}, Extract: func(o client.Object) []string {
			return []string{binding(o).Spec.PluginReference.Name}
		}},
		byTarget("service", &configurationv1alpha1.KongService{}, "KongService"),
		byTarget("route", &configurationv1alpha1.KongRoute{}, "KongRoute"),
		byTarget("consumer", &configurationv1.KongConsumer{}, "KongConsumer"),
		byTarget("consumerGroup", &configurationv1beta1.KongConsumerGroup{}, "KongConsumerGroup"),
		kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef { return binding(o).Spec.ControlPlaneRef }),
	}
}
