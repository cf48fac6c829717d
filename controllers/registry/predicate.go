package registry

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// CatalogChanged is the watch option of the loops that map a CatalogSource change to the AppTypes or
// OperatorVersions it may concern: every event but an update that changes only status.rollouts (the waves loop's
// progress, written as each install of a rollout moves on), which concerns none of them: at a thousand installs it
// would bring all of them back for each.
func CatalogChanged() builder.WatchesOption {
	return builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*operatorsv1alpha1.CatalogSource)
		after, ok2 := e.ObjectNew.(*operatorsv1alpha1.CatalogSource)
		return !ok1 || !ok2 || !OnlyRolloutsChanged(before, after)
	}})
}

// OnlyRolloutsChanged says whether after differs from before in status.rollouts and nothing else a loop reads.
func OnlyRolloutsChanged(before, after *operatorsv1alpha1.CatalogSource) bool {
	if equality.Semantic.DeepEqual(before.Status.Rollouts, after.Status.Rollouts) || before.Generation != after.Generation ||
		!equality.Semantic.DeepEqual(before.Labels, after.Labels) || !equality.Semantic.DeepEqual(before.Annotations, after.Annotations) {
		return false
	}
	b, a := before.Status, after.Status
	b.Rollouts, a.Rollouts = nil, nil
	return equality.Semantic.DeepEqual(b, a)
}
