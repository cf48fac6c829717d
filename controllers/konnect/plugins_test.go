package konnect

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/pluginannotation"
	"github.com/almproject/alm/test/konnectsim"
)

// Plugins: KongPlugin (the configuration), KongPluginBinding (the Konnect plugin entity, scoped to its targets or
// global) and the konghq.com/plugins annotation.

func kongPlugin(name, plugin, config string) *configurationv1.KongPlugin {
	kp := &configurationv1.KongPlugin{ObjectMeta: metav1.ObjectMeta{Name: name}, PluginName: plugin}
	if config != "" {
		kp.Config = apiextensionsv1.JSON{Raw: []byte(config)}
	}
	return kp
}

func serviceBinding(name, plugin, service string) *configurationv1alpha1.KongPluginBinding {
	return &configurationv1alpha1.KongPluginBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configurationv1alpha1.KongPluginBindingSpec{
			PluginReference: configurationv1alpha1.PluginRef{Name: plugin},
			Targets: &configurationv1alpha1.KongPluginBindingTargets{ServiceReference: &configurationv1alpha1.TargetRefWithGroupKind{
				Name: service, Kind: "KongService", Group: "configuration.konghq.com"}},
		},
	}
}

// pluginsOf returns the plugins in Konnect scoped to the Konnect entity id (every plugin of the test when id is "").
func (e *env) pluginsOf(id string) []konnectsim.Object {
	var out []konnectsim.Object
	for _, p := range e.simObjects(konnectsim.KindPlugin) {
		for _, field := range []string{"service", "route", "consumer", "consumer_group"} {
			if ref, _ := p.JSON[field].(map[string]any); id == "" || (ref != nil && ref["id"] == id) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Kong's sample manifests (a rate limit bound to a KongService, a plugin through a route's annotation, a global
// plugin, a consumer group with its own limit and a consumer in it) apply unchanged and end Programmed.
func TestKongPluginManifestsApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	objs := e.applyManifests("kong-plugins.yaml")
	e.waitAllProgrammed(objs)
	annotated := &configurationv1alpha1.KongPluginBinding{}
	e.waitProgrammed(annotated, pluginannotation.BindingName("KongRoute", "route", "key-auth"))

	svc, route, group := &configurationv1alpha1.KongService{}, &configurationv1alpha1.KongRoute{}, &configurationv1beta1.KongConsumerGroup{}
	for name, obj := range map[string]client.Object{"service": svc, "route": route, "consumer-group": group} {
		if err := e.get(obj, name); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.pluginsOf(svc.Status.Konnect.ID); len(got) != 1 || got[0].Name != "rate-limiting" ||
		got[0].JSON["config"].(map[string]any)["minute"] != int64(5) {
		t.Errorf("plugins of the service: %+v", got)
	}
	if got := e.pluginsOf(route.Status.Konnect.ID); len(got) != 1 || got[0].Name != "key-auth" {
		t.Errorf("plugins of the route: %+v", got)
	}
	if got := e.pluginsOf(group.Status.Konnect.ID); len(got) != 1 || got[0].Name != "rate-limiting" {
		t.Errorf("plugins of the consumer group: %+v", got)
	}
	consumer := &configurationv1.KongConsumer{}
	if err := e.get(consumer, "consumer"); err != nil {
		t.Fatal(err)
	}
	if got := e.sim.GroupConsumers(group.Status.Konnect.ID); !slices.Equal(got, []string{consumer.Status.Konnect.ID}) {
		t.Errorf("consumers of the group %v, want [%s]", got, consumer.Status.Konnect.ID)
	}
	all := e.pluginsOf("")
	global := slices.IndexFunc(all, func(o konnectsim.Object) bool { return o.Name == "cors" })
	if len(all) != 4 || global < 0 || all[global].JSON["service"] != nil || all[global].JSON["route"] != nil {
		t.Errorf("plugins in Konnect: %+v, want 4 with a global cors", all)
	}
}

// The annotation makes one binding per named KongPlugin, owned by the object; a plugin no longer named loses its
// binding and its Konnect plugin.
func TestPluginsAnnotation(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(kongPlugin("limit", "rate-limiting", `{"minute": 5}`))
	e.create(kongPlugin("cors", "cors", `{"origins": ["*"]}`))
	svc := serviceObj("svc", "cp", "example.com")
	svc.Annotations = map[string]string{pluginannotation.Annotation: "limit, cors"}
	e.create(svc)
	for _, p := range []string{"limit", "cors"} {
		b := &configurationv1alpha1.KongPluginBinding{}
		e.waitProgrammed(b, pluginannotation.BindingName("KongService", "svc", p))
		if ref := metav1.GetControllerOf(b); ref == nil || ref.Kind != "KongService" || ref.Name != "svc" {
			t.Errorf("binding %s controller %+v, want the KongService", b.Name, ref)
		}
	}
	e.waitProgrammed(svc, "svc")
	e.eventually(10*time.Second, "two plugins on the service", func() error {
		if got := e.pluginsOf(svc.Status.Konnect.ID); len(got) != 2 {
			return fmt.Errorf("%d plugins", len(got))
		}
		return nil
	})

	e.mutate(svc, "svc", func() { svc.Annotations[pluginannotation.Annotation] = "cors" })
	e.eventually(20*time.Second, "limit's binding and plugin gone", func() error {
		err := e.get(&configurationv1alpha1.KongPluginBinding{}, pluginannotation.BindingName("KongService", "svc", "limit"))
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("binding still there (%w)", err)
		}
		if got := e.pluginsOf(svc.Status.Konnect.ID); len(got) != 1 || got[0].Name != "cors" {
			return fmt.Errorf("plugins %+v", got)
		}
		return nil
	})
}

// A plugin's configuration from a Secret: applied, and followed at once when the Secret changes (the sync period is
// an hour); the status holds no hash of the Secret's value.
func TestPluginConfigFromSecret(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, StringData: map[string]string{"config": `{"minute": 7}`}})
	kp := kongPlugin("limit", "rate-limiting", "")
	kp.ConfigFrom = &configurationv1.ConfigSource{SecretValue: configurationv1.SecretValueFromSource{Secret: "limits", Key: "config"}}
	e.create(kp)
	b := serviceBinding("limit-svc", "limit", "svc")
	e.create(b)
	e.waitProgrammed(b, "limit-svc")
	if m := e.pluginMinute(b); m != int64(7) {
		t.Fatalf("config.minute in Konnect = %v, want 7", m)
	}
	hash := b.Status.ObservedHash

	s := &corev1.Secret{}
	e.mutate(s, "limits", func() { s.Data["config"] = []byte(`{"minute": 9}`) })
	e.eventually(10*time.Second, "config from the new Secret", func() error {
		if m := e.pluginMinute(b); m != int64(9) {
			return fmt.Errorf("minute %v", m)
		}
		return nil
	})
	e.eventually(5*time.Second, "status follows", func() error {
		if err := e.get(b, "limit-svc"); err != nil || b.Status.ObservedHash == hash {
			return fmt.Errorf("hash unchanged (%w)", err)
		}
		return nil
	})
	if strings.Contains(fmt.Sprint(b.Status), "minute") {
		t.Errorf("the status shows the configuration: %+v", b.Status)
	}
}

// pluginMinute is config.minute of the binding's plugin in Konnect (a message when there is not exactly one).
func (e *env) pluginMinute(b *configurationv1alpha1.KongPluginBinding) any {
	got := e.simByUID(konnectsim.KindPlugin, b.UID)
	if len(got) != 1 {
		return fmt.Sprintf("%d plugins", len(got))
	}
	return got[0].JSON["config"].(map[string]any)["minute"]
}

// An unchanged plugin is not rewritten though Konnect filled in its configuration's defaults; one edited in Konnect
// is restored within a sync period.
func TestPluginConfigDrift(t *testing.T) {
	const period = 2 * time.Second
	e := newEnv(t, envOptions{syncPeriod: period})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(kongPlugin("limit", "rate-limiting", `{"minute": 7}`))
	b := serviceBinding("limit-svc", "limit", "svc")
	e.create(b)
	e.waitProgrammed(b, "limit-svc")

	lists := count(e.sim, http.MethodGet, konnectsim.PathPlugins)
	e.eventually(4*period, "two drift scans", func() error {
		if n := count(e.sim, http.MethodGet, konnectsim.PathPlugins); n < lists+2 {
			return fmt.Errorf("%d list calls", n-lists)
		}
		return nil
	})
	if n := count(e.sim, http.MethodPut, konnectsim.PathPlugin); n != 0 {
		t.Errorf("%d plugin updates without drift, want 0", n)
	}

	if err := e.sim.Edit(b.Status.Konnect.ID, map[string]any{"config": map[string]any{"minute": 500, "policy": "local"}}); err != nil {
		t.Fatal(err)
	}
	e.eventually(period+5*time.Second, "config restored", func() error {
		if m := e.pluginMinute(b); m != int64(7) {
			return fmt.Errorf("minute %v", m)
		}
		return nil
	})
}

// 5xx answers and a lost response on create are retried with backoff and converge on exactly one plugin.
func TestPluginCreateRetriedWithoutDuplicates(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.readyControlPlane("cp")
	e.create(serviceObj("svc", "cp", "example.com"))
	e.create(kongPlugin("limit", "rate-limiting", `{"minute": 5}`))
	e.sim.FailNext(http.MethodPost, konnectsim.PathPlugins, 3, http.StatusServiceUnavailable)
	e.sim.LoseNext(http.MethodPost, konnectsim.PathPlugins, 1)
	b := serviceBinding("limit-svc", "limit", "svc")
	e.create(b)
	e.waitProgrammed(b, "limit-svc")
	if got := e.simByUID(konnectsim.KindPlugin, b.UID); len(got) != 1 || got[0].ID != b.Status.Konnect.ID {
		t.Errorf("plugins in Konnect: %+v, want exactly the one in status (%s)", got, b.Status.Konnect.ID)
	}
	if n := count(e.sim, http.MethodPost, konnectsim.PathPlugins); n != 4 {
		t.Errorf("%d plugin creates, want 4: the 3 failed and the lost one, whose plugin is then adopted by its tag", n)
	}
}

// waitGone waits until obj (of the type given) named name is deleted.
func (e *env) waitGone(obj client.Object, name string) {
	e.t.Helper()
	e.eventually(30*time.Second, fmt.Sprintf("%T %s gone", obj, name), func() error {
		if err := e.get(obj, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w, finalizers %v)", err, obj.GetFinalizers())
		}
		return nil
	})
}

// Deleting in any order ends with nothing in Konnect and nothing stuck on a finalizer.
func TestPluginDeletionOrders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []string
	}{
		{"binding first", []string{"binding", "plugin", "service", "controlplane", "auth"}},
		{"plugin first", []string{"plugin", "binding", "service", "controlplane", "auth"}},
		{"service first", []string{"service", "binding", "plugin", "controlplane", "auth"}},
		{"control plane first", []string{"controlplane", "binding", "service", "plugin", "auth"}},
		{"auth config first", []string{"auth", "binding", "plugin", "service", "controlplane"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.readyControlPlane("cp")
			e.create(serviceObj("svc", "cp", "example.com"))
			e.create(kongPlugin("limit", "rate-limiting", `{"minute": 5}`))
			e.create(serviceBinding("limit-svc", "limit", "svc"))
			e.waitProgrammed(&configurationv1alpha1.KongPluginBinding{}, "limit-svc")
			objs := map[string]client.Object{
				"binding":      &configurationv1alpha1.KongPluginBinding{},
				"plugin":       &configurationv1.KongPlugin{},
				"service":      &configurationv1alpha1.KongService{},
				"controlplane": &konnectv1alpha2.KonnectGatewayControlPlane{},
				"auth":         &konnectv1alpha1.KonnectAPIAuthConfiguration{},
			}
			names := map[string]string{"binding": "limit-svc", "plugin": "limit", "service": "svc", "controlplane": "cp", "auth": "cp-auth"}
			entityOf := map[string]konnectsim.Kind{"binding": konnectsim.KindPlugin, "service": konnectsim.KindService}
			cpDeleted := false
			for _, what := range tc.order {
				obj := objs[what]
				if err := e.get(obj, names[what]); err != nil {
					t.Fatal(err)
				}
				if err := e.c.Delete(e.ctx, obj); err != nil {
					t.Fatalf("deleting the %s: %v", what, err)
				}
				cpDeleted = cpDeleted || what == "controlplane"
				if kind, ok := entityOf[what]; ok && !cpDeleted {
					// While its control plane is there, an object's entity goes with the object (and not only
					// because something deleted later takes it along).
					e.waitGone(obj, names[what])
					if got := e.simByUID(kind, obj.GetUID()); len(got) != 0 {
						t.Errorf("the %s is gone but its %s is still in Konnect", what, kind)
					}
				}
			}
			e.eventually(30*time.Second, "every object gone", func() error {
				for _, what := range tc.order {
					if err := e.get(objs[what], names[what]); !apierrors.IsNotFound(err) {
						return fmt.Errorf("the %s is still there (%w, finalizers %v)", what, err, objs[what].GetFinalizers())
					}
				}
				return nil
			})
			for _, kind := range []konnectsim.Kind{konnectsim.KindControlPlane, konnectsim.KindService, konnectsim.KindPlugin} {
				if got := e.simObjects(kind); len(got) != 0 {
					t.Errorf("%d %s left in Konnect", len(got), kind)
				}
			}
		})
	}
}
