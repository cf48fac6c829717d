package apptype_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/fieldindex"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
)

// TestFoundByPackage: the loops find a package's OperatorVersions and AppTypes by field, both from the manager's
// cache (its indexes) and from the API server (the CRDs' selectable fields, as kubectl get --field-selector does),
// and get the package's objects and nothing else of the namespace.
func TestFoundByPackage(t *testing.T) {
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "by-package")
	for _, d := range []harness.Demo{{Package: "alpha", Name: "alpha.v1.0.0", Version: "1.0.0"},
		{Package: "alpha", Name: "alpha.v1.1.0", Version: "1.1.0"}, {Package: "beta", Name: "beta.v1.0.0", Version: "1.0.0"}} {
		ov := d.OperatorVersion()
		ov.Namespace = ns
		if err := c.Create(t.Context(), ov); err != nil {
			t.Fatal(err)
		}
	}
	for _, pkg := range []string{"alpha", "beta"} {
		at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg}, Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
		if err := c.Create(t.Context(), at); err != nil {
			t.Fatal(err)
		}
	}
	mgr := harness.StartManager(t, cp, func(mgr ctrl.Manager) error {
		// Twice, as two loops' setups do: the second adds nothing.
		for range 2 {
			if err := fieldindex.Register(context.Background(), mgr.GetCache()); err != nil {
				return err
			}
		}
		return nil
	})
	for name, r := range map[string]client.Reader{"the API server": c, "the cache": mgr.GetClient()} {
		harness.Eventually(t, 20*time.Second, func() error {
			if err := foundByPackage(t.Context(), r, ns); err != nil {
				return fmt.Errorf("from %s: %w", name, err)
			}
			return nil
		})
	}
}

// foundByPackage checks what r finds of package alpha and of AppType beta in namespace ns.
func foundByPackage(ctx context.Context, r client.Reader, ns string) error {
	all, err := versions.OfPackage(ctx, r, ns, "alpha")
	if err != nil {
		return err
	}
	var names []string
	for _, ov := range all {
		names = append(names, ov.Name)
	}
	slices.Sort(names)
	if want := []string{"alpha.v1.0.0", "alpha.v1.1.0"}; !slices.Equal(names, want) {
		return fmt.Errorf("versions of alpha: %v, want %v", names, want)
	}
	beta := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta.v1.0.0"},
		Spec: operatorsv1alpha1.OperatorVersionSpec{PackageName: "beta"}}
	at, err := registry.AppTypeFor(ctx, r, beta)
	if err != nil {
		return err
	}
	if at == nil || at.Name != "beta" {
		return fmt.Errorf("AppType for beta.v1.0.0: %v, want beta", at)
	}
	return nil
}
