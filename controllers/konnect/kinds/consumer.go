package kinds

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Consumer is the Kind of KongConsumer: a consumer in a Konnect control plane, its credentials and (with groups,
// when the KongConsumerGroup CRD is installed) its consumer group memberships; without, they are reported as
// unsupported.
func Consumer(groups bool) entity.Kind[*configurationv1.KongConsumer] {
	m := consumerMapping{groups: groups}
	return entity.Kind[*configurationv1.KongConsumer]{Mapping: m, Parts: entity.WithParts[*configurationv1.KongConsumer, consumerParts](m)}
}

// consumerMapping adapts KongConsumer; groups says whether consumer groups are synced.
type consumerMapping struct {
	groups bool
}

func (consumerMapping) Name() string                       { return "KongConsumer" }
func (consumerMapping) Type() konnectapi.EntityType        { return konnectapi.TypeConsumer }
func (consumerMapping) New() *configurationv1.KongConsumer { return &configurationv1.KongConsumer{} }
func (consumerMapping) NewList() client.ObjectList         { return &configurationv1.KongConsumerList{} }
func (consumerMapping) Items(l client.ObjectList) []*configurationv1.KongConsumer {
	return kindbase.Pointers(l.(*configurationv1.KongConsumerList).Items)
}

func (consumerMapping) Managed(kc *configurationv1.KongConsumer) bool {
	return kc.Spec.ControlPlaneRef.ForKonnect()
}

func (consumerMapping) Resolve(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer) (entity.Refs, []entity.RefCheck, error) {
	return kindbase.ResolveControlPlane(ctx, c, "KongConsumer", kc.Namespace, kc.Spec.ControlPlaneRef)
}

func (k consumerMapping) Desired(kc *configurationv1.KongConsumer, _ entity.Refs) (map[string]any, error) {
	body := map[string]any{"tags": kindbase.StringsToAny(entity.IdentityTags(k.Name(), kc, kc.Spec.Tags))}
	if kc.Username != "" {
		body["username"] = kc.Username
	}
	if kc.CustomID != "" {
		body["custom_id"] = kc.CustomID
	}
	return body, nil
}

func (consumerMapping) DriftKeys() []string { return []string{"username", "custom_id", "tags"} }

func (consumerMapping) Conditions(kc *configurationv1.KongConsumer) *[]metav1.Condition {
	return &kc.Status.Conditions
}

func (consumerMapping) State(kc *configurationv1.KongConsumer) entity.State {
	return kindbase.StateInControlPlane(kc.Status.Konnect, kc.Status.SyncStatus)
}

func (consumerMapping) SetState(kc *configurationv1.KongConsumer, st entity.State) {
	kc.Status.Konnect = kindbase.StatusInControlPlane(st)
	kc.Status.SyncStatus = st.Sync
}

func (k consumerMapping) DeletionScope(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	return kindbase.DeletionScopeInControlPlane(ctx, c, kc, st, k.Resolve)
}

func (k consumerMapping) Indexes() []entity.RefIndex {
	indexes := []entity.RefIndex{credentialsIndex(), kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1.KongConsumer).Spec.ControlPlaneRef
	})}
	if k.groups {
		indexes = append(indexes, consumerGroupsIndex())
	}
	return indexes
}
