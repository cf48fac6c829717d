package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localenv"
)

// bindRateLimit declares what 1.4.0 brought: a rate-limiting KongPlugin bound to the demo service by a
// KongPluginBinding. The binding ends Programmed, and Konnect holds exactly one plugin, on the demo service's entity.
func bindRateLimit(t *testing.T, ctx context.Context, env *localenv.Env, ids localenv.KonnectIDs) []client.Object {
	t.Helper()
	plugin := &configurationv1.KongPlugin{
		ObjectMeta: metav1.ObjectMeta{Namespace: localenv.DemoNamespace, Name: "rate-limit-5-min"},
		PluginName: "rate-limiting",
		Config:     apiextensionsv1.JSON{Raw: []byte(`{"minute":5,"policy":"local"}`)},
	}
	binding := &configurationv1alpha1.KongPluginBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: localenv.DemoNamespace, Name: "demo-rate-limit"},
		Spec: configurationv1alpha1.KongPluginBindingSpec{
			PluginReference: configurationv1alpha1.PluginRef{Name: plugin.Name},
			Targets: &configurationv1alpha1.KongPluginBindingTargets{ServiceReference: &configurationv1alpha1.TargetRefWithGroupKind{
				Name: localenv.DemoService, Kind: "KongService", Group: configurationv1alpha1.GroupVersion.Group}},
		},
	}
	begin := time.Now()
	must(t, env.Client.Create(ctx, plugin))
	must(t, env.Client.Create(ctx, binding))
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(binding), binding); err != nil {
			return err
		}
		c := apimeta.FindStatusCondition(binding.Status.Conditions, konnectv1alpha1.ConditionProgrammed)
		if c == nil || c.Status != metav1.ConditionTrue || binding.Status.Konnect == nil || binding.Status.Konnect.ID == "" {
			return fmt.Errorf("KongPluginBinding %s is not Programmed: %v", binding.Name, c)
		}
		return nil
	}))
	figure(t, "KongPlugin and KongPluginBinding applied -> Programmed", time.Since(begin))
	plugins := env.Sim.ObjectsOf(konnectsim.KindPlugin)
	if len(plugins) != 1 || plugins[0].ID != binding.Status.Konnect.ID {
		t.Fatalf("Konnect holds plugins %+v, want exactly the binding's %s", plugins, binding.Status.Konnect.ID)
	}
	if service := ids["KongService/"+localenv.DemoService]; !slices.Contains(pluginServices(plugins[0]), service) {
		t.Errorf("the rate-limiting plugin %s is not on the demo service %s: %s", plugins[0].ID, service, plugins[0].JSON)
	}
	return []client.Object{binding, plugin}
}

// pluginServices is the service ID a stored plugin is scoped to, if any.
func pluginServices(o konnectsim.Object) []string {
	if service, ok := o.JSON["service"].(map[string]any); ok {
		if id, ok := service["id"].(string); ok {
			return []string{id}
		}
	}
	return nil
}

// deleteRateLimit deletes the binding and the plugin; the plugin leaves Konnect.
func deleteRateLimit(t *testing.T, ctx context.Context, env *localenv.Env, objs []client.Object) {
	t.Helper()
	for _, obj := range objs {
		must(t, client.IgnoreNotFound(env.Client.Delete(ctx, obj)))
	}
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		if left := env.Sim.ObjectsOf(konnectsim.KindPlugin); len(left) != 0 {
			return fmt.Errorf("%d plugins left in Konnect: %+v", len(left), left)
		}
		return nil
	}))
}
