package kinds

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// ConsumerGroup is the Kind of KongConsumerGroup: a consumer group in a Konnect control plane. Its members are the
// consumers that name it (consumerGroups); see memberships.go.
func ConsumerGroup() entity.Kind[*configurationv1beta1.KongConsumerGroup] {
	m := consumerGroupMapping{}
	return entity.Kind[*configurationv1beta1.KongConsumerGroup]{Mapping: m, Parts: entity.WithParts[*configurationv1beta1.KongConsumerGroup, groupMembers](m)}
}

// consumerGroupMapping adapts KongConsumerGroup.
type consumerGroupMapping struct{}

func (consumerGroupMapping) Name() string                { return "KongConsumerGroup" }
func (consumerGroupMapping) Type() konnectapi.EntityType { return konnectapi.TypeConsumerGroup }
func (consumerGroupMapping) New() *configurationv1beta1.KongConsumerGroup {
	return &configurationv1beta1.KongConsumerGroup{}
}
func (consumerGroupMapping) NewList() client.ObjectList {
	return &configurationv1beta1.KongConsumerGroupList{}
}
func (consumerGroupMapping) Items(l client.ObjectList) []*configurationv1beta1.KongConsumerGroup {
	return kindbase.Pointers(l.(*configurationv1beta1.KongConsumerGroupList).Items)
}

func (consumerGroupMapping) Managed(g *configurationv1beta1.KongConsumerGroup) bool {
	return g.Spec.ControlPlaneRef.ForKonnect()
}

func (consumerGroupMapping) Resolve(ctx context.Context, c client.Reader, g *configurationv1beta1.KongConsumerGroup) (entity.Refs, []entity.RefCheck, error) {
	return kindbase.ResolveControlPlane(ctx, c, "KongConsumerGroup", g.Namespace, g.Spec.ControlPlaneRef)
}

// groupName is the group's name in Kong: spec.name, or the object's name.
func groupName(g *configurationv1beta1.KongConsumerGroup) string {
	if g.Spec.Name != "" {
		return g.Spec.Name
	}
	return g.Name
}

func (k consumerGroupMapping) Desired(g *configurationv1beta1.KongConsumerGroup, _ entity.Refs) (map[string]any, error) {
	return map[string]any{"name": groupName(g), "tags": kindbase.StringsToAny(entity.IdentityTags(k.Name(), g, g.Spec.Tags))}, nil
}

func (consumerGroupMapping) DriftKeys() []string { return []string{"name", "tags"} }

func (consumerGroupMapping) Conditions(g *configurationv1beta1.KongConsumerGroup) *[]metav1.Condition {
	return &g.Status.Conditions
}

func (consumerGroupMapping) State(g *configurationv1beta1.KongConsumerGroup) entity.State {
	return kindbase.StateInControlPlane(g.Status.Konnect, g.Status.SyncStatus)
}

func (consumerGroupMapping) SetState(g *configurationv1beta1.KongConsumerGroup, st entity.State) {
	g.Status.Konnect = kindbase.StatusInControlPlane(st)
	g.Status.SyncStatus = st.Sync
}

func (k consumerGroupMapping) DeletionScope(ctx context.Context, c client.Reader, g *configurationv1beta1.KongConsumerGroup, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	return kindbase.DeletionScopeInControlPlane(ctx, c, g, st, k.Resolve)
}

func (consumerGroupMapping) Indexes() []entity.RefIndex {
	return []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1beta1.KongConsumerGroup).Spec.ControlPlaneRef
	})}
}
