package requirements_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/controllers/requirements"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

// A required CRD whose owning bundle the catalog lists only as an image is created from the pulled image, with
// the pull options of that bundle's CatalogSource; while the image cannot be pulled nothing is created.
func TestRequiredCRDFromBundleImage(t *testing.T) {
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "req-image")
	reg := harness.NewRegistry(t)
	cs := reg.ImageCatalogSource(ns, "images")
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	// The provider's bundle, only as an image in the catalog (olm.bundle with an image and its properties).
	provider := harness.Demo{Namespace: ns, Name: ns + "-provider.v1.0.0", Version: "1.0.0", Package: ns + "-provider"}
	ref := reg.Ref(provider.Package + "/bundle:v1.0.0")
	digest, _ := reg.PushBundle(t, harness.WriteBundle(t, t.TempDir(), provider), ref)
	group := provider.Package + ".example.com"
	doc := fmt.Sprintf(`{"schema":"olm.package","name":%[1]q,"defaultChannel":"stable"}
{"schema":"olm.channel","package":%[1]q,"name":"stable","entries":[{"name":%[2]q}]}
{"schema":"olm.bundle","package":%[1]q,"name":%[2]q,"image":%[3]q,"properties":[
 {"type":"olm.package","value":{"packageName":%[1]q,"version":"1.0.0"}},
 {"type":"olm.gvk","value":{"group":%[4]q,"version":"v1","kind":"Widget"}}]}
`, provider.Package, provider.Name, ref+"@"+digest, group)
	contents := fbc.Load(strings.NewReader(doc), "catalog.json")
	if len(contents.Problems) > 0 || len(contents.Bundles) != 1 || contents.Bundles[0].HasManifests() {
		t.Fatalf("catalog: %v", contents.Problems)
	}
	reg.SetDown(true)
	reg2 := registry.New()
	reg2.Set(types.NamespacedName{Namespace: ns, Name: cs.Name}, 0, contents, "sha256:catalog")
	bundles := &bundlecontent.Source{Cache: &image.BundleCache{Dir: filepath.Join(t.TempDir(), "bundles")}, Clients: &imagepull.Clients{}}
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		return (&requirements.Reconciler{Client: mgr.GetClient(), Registry: reg2, Recorder: mgr.GetEventRecorder("requirements"),
			Bundles: bundles, Reader: mgr.GetAPIReader()}).SetupWithManager(mgr)
	})

	crdName := "widgets." + group
	needy := harness.Demo{Namespace: ns, Name: "needy.v1.0.0", Version: "1.0.0", Package: ns + "-needy", RequiredCRDs: []string{crdName}}.OperatorVersion()
	if err := c.Create(t.Context(), needy); err != nil {
		t.Fatal(err)
	}
	// The registry is down: the loop reports the requirement as missing, naming the image and the cause.
	harness.Eventually(t, 60*time.Second, func() error {
		for _, e := range eventsOf(t, c, ns, needy.Name) {
			if strings.Contains(e, crdName) && strings.Contains(e, ref) && strings.Contains(e, "cannot be pulled") {
				return nil
			}
		}
		return fmt.Errorf("no Event reports %s missing because %s cannot be pulled", crdName, ref)
	})
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: crdName}, crd); err == nil {
		t.Fatalf("CRD %s created while its bundle image could not be pulled", crdName)
	}
	reg.SetDown(false)
	harness.Eventually(t, 60*time.Second, func() error { return c.Get(t.Context(), client.ObjectKey{Name: crdName}, crd) })
	if crd.Labels[operatorsv1alpha1.LabelAppType] != provider.Package || crd.Spec.Names.Kind != "Widget" {
		t.Errorf("CRD %s: labels %v, kind %s", crdName, crd.Labels, crd.Spec.Names.Kind)
	}
}

func eventsOf(t *testing.T, c client.Client, ns, name string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}
