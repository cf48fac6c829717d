package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localenv"
)

// TestRequirementsPullInTheKonnectOperator declares only gateway-config, whose bundle requires the KongService kind:
// the requirements loop creates the CRD from the Konnect operator's bundle and the CRD loop declares the Konnect
// operator, so both run. Then 1.2.0 is published without 1.1.0: its skipRange lets 1.0.0 upgrade to it directly.
// Both are published as bundle images with a catalog image, as on a real cluster.
func TestRequirementsPullInTheKonnectOperator(t *testing.T) {
	ctx, env, story := start(t)
	const gwNS = "gateway"
	var pub localenv.Published
	for _, b := range []string{"gateway-config/0.1.0", "konnect-operator/1.0.0"} {
		var err error
		pub, err = story.Publish(ctx, filepath.Join(root, "bundles", b))
		must(t, err)
	}
	must(t, story.CreateCatalog(ctx))
	assertCatalogServes(t, ctx, story, pub)
	begin := time.Now()
	must(t, story.DeclareAppType(ctx, gwNS, "gateway-config"))
	_, err := story.WaitInstalled(ctx, gwNS, "gateway-config", "0.1.0")
	must(t, err)
	_, err = story.WaitInstalled(ctx, gwNS, localenv.Package, "1.0.0")
	must(t, err)
	figure(t, "gateway-config declared -> both operators Succeeded", time.Since(begin))
	at := &operatorsv1alpha1.AppType{}
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: gwNS, Name: localenv.Package}, at))
	t.Logf("AppType %s/%s was declared by ALM: %v", gwNS, at.Name, at.Labels)

	// gateway-config runs: it summarises the KongServices of its namespace in a ConfigMap.
	must(t, story.ApplyDemo(ctx, gwNS))
	_, err = story.WaitProgrammed(ctx, gwNS)
	must(t, err)
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: gwNS, Name: "gateway-config-summary"}, cm); err != nil {
			return err
		}
		for _, v := range cm.Data {
			if strings.Contains(v, localenv.DemoServiceHost) {
				return nil
			}
		}
		return fmt.Errorf("the summary does not list the service yet: %v", cm.Data)
	}))

	// 1.2.0's skipRange covers 1.0.0: published alone, it upgrades 1.0.0 directly.
	begin = time.Now()
	pub, err = story.Publish(ctx, filepath.Join(root, "bundles", localenv.Package, "1.2.0"))
	must(t, err)
	assertCatalogServes(t, ctx, story, pub)
	ov, err := story.WaitInstalled(ctx, gwNS, localenv.Package, "1.2.0")
	must(t, err)
	figure(t, "publish 1.2.0 (skipRange) -> 1.0.0 deleted", time.Since(begin))
	assertBundleImage(t, ov, pub)
	assertPulledFromRegistry(t, env, gwNS, "1.2.0")
	assertALMNeverForbidden(t, env)
}
