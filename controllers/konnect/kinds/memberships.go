package kinds

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Consumer group memberships. A KongConsumer names its KongConsumerGroups (consumerGroups); when that declaration
// changes, the consumer's part sync adds and removes its memberships at once. Memberships changed in Konnect are
// found by each group's periodic part check, one list of the group's consumers per sync period, not one call per
// consumer. Only memberships between this operator's consumers and groups are removed: others are someone else's.

// indexConsumerGroups finds the KongConsumers that name a KongConsumerGroup.
const indexConsumerGroups = "konnect.consumerGroups"

// ourKindTag is the identity tag of the entities of one of this operator's kinds.
func ourKindTag(kind string) string { return entity.TagKind + ":" + kind }

// declaredGroups checks the groups the consumer names: each must be in Konnect, in the consumer's control plane. It
// returns their Konnect IDs, sorted.
func (k consumerMapping) declaredGroups(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer) ([]string, entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionKongConsumerGroupRefsValid, Absent: len(kc.ConsumerGroups) == 0}
	if !k.groups {
		check.Advisory, check.Reason = true, konnectv1alpha1.ReasonUnsupported
		check.Message = fmt.Sprintf("consumerGroups %s are not synchronised: the KongConsumerGroup CRD is not installed, so the consumer is in Konnect without these group memberships",
			strings.Join(kc.ConsumerGroups, ", "))
		return nil, check, nil
	}
	var ids, problems []string
	own := kindbase.CPRefKey(kc.Namespace, kc.Spec.ControlPlaneRef)
	for _, name := range slices.Compact(slices.Sorted(slices.Values(kc.ConsumerGroups))) {
		g := &configurationv1beta1.KongConsumerGroup{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: name}, g); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, check, err
			}
			problems = append(problems, fmt.Sprintf("KongConsumerGroup %s/%s not found", kc.Namespace, name))
			continue
		}
		switch {
		case !g.DeletionTimestamp.IsZero() || g.Status.Konnect == nil || g.Status.Konnect.ID == "":
			problems = append(problems, fmt.Sprintf("KongConsumerGroup %s/%s does not exist in Konnect yet (or is being deleted)", kc.Namespace, name))
		case kindbase.CPRefKey(g.Namespace, g.Spec.ControlPlaneRef) != own:
			problems = append(problems, fmt.Sprintf("KongConsumerGroup %s/%s is in another control plane", kc.Namespace, name))
		default:
			ids = append(ids, g.Status.Konnect.ID)
		}
	}
	slices.Sort(ids)
	if len(problems) > 0 {
		check.Message = "consumer groups cannot be joined: " + strings.Join(problems, "; ")
	} else {
		check.OK, check.Message = true, fmt.Sprintf("consumer groups exist in Konnect: %s", strings.Join(kc.ConsumerGroups, ", "))
	}
	return ids, check, nil
}

// syncConsumerGroups makes the consumer a member of exactly the groups want among this operator's groups.
func syncConsumerGroups(ctx context.Context, api konnectapi.API, cpID, consumerID string, want []string) error {
	have, err := api.ConsumerGroupsOf(ctx, cpID, consumerID)
	if err != nil {
		return err
	}
	joined := map[string]bool{}
	for _, g := range have {
		joined[g.ID] = true
		if !slices.Contains(want, g.ID) && slices.Contains(stringList(g.Body["tags"]), ourKindTag("KongConsumerGroup")) {
			if err := api.RemoveFromConsumerGroup(ctx, cpID, consumerID, g.ID); err != nil && !konnectapi.IsNotFound(err) {
				return err
			}
		}
	}
	for _, id := range want {
		if !joined[id] {
			if err := api.AddToConsumerGroup(ctx, cpID, consumerID, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func consumerGroupsIndex() entity.RefIndex {
	return entity.RefIndex{
		Field:  indexConsumerGroups,
		Target: &configurationv1beta1.KongConsumerGroup{},
		Extract: func(o client.Object) []string {
			return o.(*configurationv1.KongConsumer).ConsumerGroups
		},
	}
}

// groupMembers are the consumers a group's KongConsumers declare, by Konnect ID. They are not hashed (no exported
// fields): a consumer joining changes the consumer, not the group.
type groupMembers struct {
	ids []string
}

// DeclaredParts of a group are the Konnect IDs of the Programmed KongConsumers of its control plane that name it.
func (consumerGroupMapping) DeclaredParts(ctx context.Context, c client.Reader, g *configurationv1beta1.KongConsumerGroup) (groupMembers, bool, []entity.RefCheck, error) {
	consumers := &configurationv1.KongConsumerList{}
	if err := c.List(ctx, consumers, client.InNamespace(g.Namespace), client.MatchingFields{indexConsumerGroups: g.Name}); err != nil {
		return groupMembers{}, false, nil, err
	}
	var ids []string
	for _, kc := range consumers.Items {
		k := kc.Status.Konnect
		if kc.DeletionTimestamp.IsZero() && k != nil && k.ID != "" && g.Status.Konnect != nil && k.ControlPlaneID == g.Status.Konnect.ControlPlaneID {
			ids = append(ids, k.ID)
		}
	}
	return groupMembers{ids: ids}, true, nil, nil
}

// SyncParts restores the group's memberships: declared consumers missing from it are added, this operator's
// consumers that no longer name it are removed.
func (consumerGroupMapping) SyncParts(ctx context.Context, api konnectapi.API, refs entity.Refs, groupID string, m groupMembers, _ bool) error {
	have, err := api.ConsumersOfGroup(ctx, refs.ControlPlaneID, groupID)
	if err != nil {
		return err
	}
	in := map[string]bool{}
	for _, kc := range have {
		in[kc.ID] = true
		if !slices.Contains(m.ids, kc.ID) && slices.Contains(stringList(kc.Body["tags"]), ourKindTag("KongConsumer")) {
			if err := api.RemoveFromConsumerGroup(ctx, refs.ControlPlaneID, kc.ID, groupID); err != nil && !konnectapi.IsNotFound(err) {
				return err
			}
		}
	}
	for _, id := range m.ids {
		if !in[id] {
			if err := api.AddToConsumerGroup(ctx, refs.ControlPlaneID, id, groupID); err != nil {
				return err
			}
		}
	}
	return nil
}

// stringList returns the strings of a decoded JSON list.
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
