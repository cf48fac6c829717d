package catalogsource_test

import (
	"os"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/catalogsource"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
)

// A decompression bomb (a layer of a few MiB that expands past the 2 GiB a catalog image may hold) is cut off at
// the limit with ImageTooLarge naming the image, the layer, the entry and the limit; its CatalogSource keeps serving
// what it served, another CatalogSource keeps serving, and the scratch directory and its space are left empty.
func TestImageCatalogDecompressionBombRefused(t *testing.T) {
	scratch := t.TempDir()
	space := &image.Space{MaxBytes: 2 << 30}
	reg := registry.New()
	harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		return (&catalogsource.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Registry: reg, Resync: time.Second,
			Images: &imagepull.Clients{ScratchDir: scratch, Space: space}}).SetupWithManager(mgr)
	}, func(o *ctrl.Options) { o.Cache, o.Client = loops.CacheOptions(), loops.ClientOptions() })
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "catsrc-bomb")
	r := harness.NewRegistry(t)
	r.PushCatalog(t, map[string][]byte{"p/catalog.json": []byte(minimalFBC)}, "catalogs/ops:latest")
	r.PushCatalog(t, map[string][]byte{"q/catalog.json": []byte(strings.NewReplacer(`"p"`, `"q"`, `"p.v1.0.0"`, `"q.v1.0.0"`).Replace(minimalFBC))}, "catalogs/other:latest")
	ops := imageSource(t, c, ns, "ops", r.Host+"/catalogs/ops:latest")
	other := imageSource(t, c, ns, "other", r.Host+"/catalogs/other:latest")
	waitStatus(t, c, ops, counts(1, 1, 0))
	waitStatus(t, c, other, counts(1, 1, 0))

	limit := image.DefaultCatalogLimits().MaxUncompressed
	bomb, err := catalogsource.BombImage(limit + 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := image.Push(t.Context(), bomb, r.Host+"/catalogs/ops:latest", image.Options{Insecure: true}); err != nil {
		t.Fatal(err)
	}
	poke(t, c, r, ops)
	cs := waitStatus(t, c, ops, readyReason(operatorsv1alpha1.ReasonImageTooLarge, "refused (uncompressed-size)", "layer sha256:",
		`entry "configs/padding-`, "would pass the limit of 2147483648 bytes", "still serving"))
	t.Log(cs.Status.Conditions[0].Message)
	if reg.Index().Bundle("p", "p.v1.0.0") == nil || reg.Index().Bundle("q", "q.v1.0.0") == nil {
		t.Error("a catalog served before the bomb is gone")
	}
	waitStatus(t, c, other, readyReason(operatorsv1alpha1.ReasonSynced))
	if left, _ := os.ReadDir(scratch); len(left) != 0 || space.Used() != 0 {
		t.Errorf("after the bomb: the scratch directory holds %v, %d bytes reserved", left, space.Used())
	}
}
