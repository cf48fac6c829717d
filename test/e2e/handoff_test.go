package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localenv"
)

// assertHandoff checks the hand-over of the upgrade from version from to version to (which upgrade has checked
// for what every upgrade keeps: the operator's objects adopted, the Konnect IDs unchanged, no Konnect create): the
// new OperatorVersion reports HandoffCompleted=True from from, after the operator answered completed; ALM gave the
// operator its OperatorVersion's name in its environment; every Konnect entity carries the new version's identity
// tags (tag scheme v2); and no entity is in Konnect twice.
func assertHandoff(t *testing.T, ctx context.Context, env *localenv.Env, from, to string) {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	name := localenv.Package + ".v" + to
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ov))
	cond := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionHandoff)
	h := ov.Status.Handoff
	if cond == nil || cond.Status != "True" || h == nil || !h.Completed || h.From != localenv.Package+".v"+from {
		t.Errorf("OperatorVersion %s: condition %s %+v, status.handoff %+v; want True, completed, from %s", name, operatorsv1alpha1.ConditionHandoff, cond, h, from)
	} else {
		t.Logf("OperatorVersion %s: %s=True (%s): %s; took over %d objects from %s", name, cond.Type, cond.Reason, cond.Message, len(h.Objects), h.From)
	}
	dep := &appsv1.Deployment{}
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: localenv.Package}, dep))
	env0 := map[string]string{}
	for _, v := range dep.Spec.Template.Spec.Containers[0].Env {
		env0[v.Name] = v.Value
	}
	if env0["OPERATOR_VERSION_NAME"] != name || env0["OPERATOR_VERSION_NAMESPACE"] != ns {
		t.Errorf("the operator's environment lacks its OperatorVersion: %v", env0)
	}
	entities := 0
	for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindService, konnectsim.KindRoute, konnectsim.KindConsumer} {
		objs := env.Sim.ObjectsOf(kind)
		if len(objs) != 1 {
			t.Errorf("%d %s entities in Konnect after the hand-over, want 1", len(objs), kind)
		}
		for _, o := range objs {
			entities++
			group, version := entity.TagValue(o.Tags, entity.TagGroup), entity.TagValue(o.Tags, entity.TagVersion)
			if kind == konnectsim.KindControlPlane {
				group, version = o.Labels[entity.TagGroup], o.Labels[entity.TagVersion]
			}
			if group == "" || version == "" {
				t.Errorf("Konnect %s %s lacks the v2 identity tags after the hand-over: tags %v, labels %v", kind, o.ID, o.Tags, o.Labels)
			}
		}
	}
	t.Logf("after the hand-over to %s: %d Konnect entities re-tagged in place (k8s-group, k8s-version), none created", to, entities)
}
