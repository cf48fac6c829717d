package apptype_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
)

// TestPreviewOfAnImageCatalog: a catalog image whose bundles exist only as bundle images (as opm writes catalogs);
// the preview pulls the two bundle images and shows the same changes as the bundle directories.
func TestPreviewOfAnImageCatalog(t *testing.T) {
	c := harness.Client(t, cp)
	harness.EnsureNamespace(t, c, almNamespace)
	r := harness.NewRegistry(t)
	_, dir := konnectCatalog(t)
	tag := "catalogs/konnect:" + fmt.Sprint(time.Now().UnixNano())
	r.PushCatalog(t, map[string][]byte{"konnect-operator/catalog.json": r.ImageCatalog(t, dir)}, tag)
	name := "konnect-images-" + fmt.Sprint(time.Now().UnixNano()%100000)
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: almNamespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: r.Ref(tag), Insecure: true}}}
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(t.Context(), cs) })

	selected, err := loops.Select("catalogsource,apptype")
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	opts := loops.Options{Registry: reg, Namespace: almNamespace, CatalogResync: 2 * time.Second,
		Bundles: loops.NewBundles(&image.BundleCache{Dir: t.TempDir()}, almNamespace)}
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		for _, l := range selected {
			if err := l.Setup(mgr, opts); err != nil {
				return err
			}
		}
		return nil
	})
	harness.Eventually(t, 60*time.Second, func() error {
		if _, ok := reg.Digest(types.NamespacedName{Namespace: almNamespace, Name: name}); !ok {
			return fmt.Errorf("catalog %s not loaded yet", name)
		}
		return nil
	})
	ns := harness.Namespace(t, c, "apptype-images")
	installed(t, c, reg, ns)
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "konnect"},
		Spec: operatorsv1alpha1.AppTypeSpec{Package: "konnect-operator", Source: name, SourceNamespace: almNamespace,
			Approval: operatorsv1alpha1.ApprovalManual}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		return checkPreviewAndDeprecation(at)
	})
	if p := at.Status.UpgradePreview; len(p.Objects) != 1 || p.Objects[0].Detail != "container manager: image alm.local/konnect-operator:1.0.0 -> alm.local/konnect-operator:1.1.0" {
		t.Errorf("preview objects %+v", p.Objects)
	}
}
