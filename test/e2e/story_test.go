package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/hack/bundlegen"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localenv"
)

const ns = localenv.OperatorNamespace

// TestStory: publish (a bundle image and a catalog image), install, sync, upgrade three times by publishing (the
// third with the operator's hand-over: 1.3.0 re-tags every Konnect entity before ownership moves), fail forward over
// a crashing version, uninstall.
func TestStory(t *testing.T) {
	ctx, env, story := start(t)
	bundles := filepath.Join(root, "bundles", localenv.Package)

	// Publish 1.0.0 (its bundle image, then the catalog image), point an image CatalogSource at the catalog tag and
	// declare the AppType: the operator runs as its own ServiceAccount, held to its bundle's RBAC.
	pub, err := story.Publish(ctx, filepath.Join(bundles, "1.0.0"))
	must(t, err)
	must(t, story.CreateCatalog(ctx))
	assertCatalogServes(t, ctx, story, pub)
	begin := time.Now()
	must(t, story.DeclareAppType(ctx, ns, localenv.Package))
	ov, err := story.WaitInstalled(ctx, ns, localenv.Package, "1.0.0")
	must(t, err)
	figure(t, "AppType declared -> OperatorVersion Succeeded", time.Since(begin))
	assertBundleImage(t, ov, pub)
	assertPulledFromRegistry(t, env, ns, "1.0.0")
	assertOperatorRBAC(t, ctx, env)
	assertALMRBAC(t, ctx, env)
	assertALMInstallMetrics(t, ctx, env, ov)

	// Konnect: every entity created exactly once and Programmed.
	begin = time.Now()
	must(t, story.ApplyDemo(ctx, localenv.DemoNamespace))
	ids, err := story.WaitProgrammed(ctx, localenv.DemoNamespace)
	must(t, err)
	figure(t, "Konnect objects applied -> all Programmed", time.Since(begin))
	assertCreatedOnce(t, env)
	assertKonnectCreatesCounted(t, ctx, env)
	edited, err := story.EditServiceInKonnect(ctx, ids["KongService/"+localenv.DemoService])
	must(t, err)
	if !edited {
		t.Fatal("the out-of-band edit needs the simulator")
	}
	assertDriftCounted(t, ctx, env)

	// A team installs gateway-config in a namespace no cluster admin trusted, through its ServiceAccount.
	begin = time.Now()
	_, err = story.InstallAsTenant(ctx)
	must(t, err)
	figure(t, "tenant AppType with spec.serviceAccountName -> Succeeded", time.Since(begin))
	assertTenantInstall(t, ctx, env)

	// Upgrades by publishing: 1.1.0 replaces 1.0.0, then 1.2.0 replaces 1.1.0.
	for i, version := range []string{"1.1.0", "1.2.0"} {
		upgrade(t, ctx, env, story, filepath.Join(bundles, version), version, ids)
		assertALMUpgradeMetrics(t, ctx, env, localenv.Package+".v"+version, float64(i+1), 0)
	}
	logStatus(t, ctx, env, "1.2.0")
	// 1.3.0 takes part in its upgrade: it re-tags every entity 1.2.0 created (tag scheme v2) before ALM moves
	// ownership; the same checks as above (same IDs, no create) and the hand-over's own.
	upgrade(t, ctx, env, story, filepath.Join(bundles, "1.3.0"), "1.3.0", ids)
	assertHandoff(t, ctx, env, "1.2.0", "1.3.0")
	assertALMUpgradeMetrics(t, ctx, env, localenv.Package+".v1.3.0", 3, 0)
	// The new operator syncs: a change made in Kubernetes after the upgrades reaches Konnect.
	setServiceHost(t, ctx, env, "after-upgrade.demo.svc")
	waitServiceHostInKonnect(t, ctx, env, ids["KongService/"+localenv.DemoService], "after-upgrade.demo.svc")
	// Every later version, each replacing the one before: 1.4.0 brings plugins and consumer groups (their CRDs are
	// installed with it), and once on the newest a rate limit bound to the demo service reaches Konnect.
	upgrades := 3.0
	for _, version := range laterVersions(t, "1.3.0") {
		upgrade(t, ctx, env, story, filepath.Join(bundles, version), version, ids)
		upgrades++
		assertALMUpgradeMetrics(t, ctx, env, localenv.Package+".v"+version, upgrades, 0)
	}
	plugin := bindRateLimit(t, ctx, env, ids)

	fixed := failForward(t, ctx, env, story, ids)
	if out, err := env.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=OperatorVersion",
		"--sort-by=.lastTimestamp"); err == nil {
		t.Logf("the OperatorVersions' events through the failed upgrade and its fix:\n%s", out)
	}
	assertALMUpgradeMetrics(t, ctx, env, localenv.Package+".v"+fixed, upgrades+1, 1)
	deleteRateLimit(t, ctx, env, plugin)
	// Before the uninstall stops the operator: its token and its metrics.
	values := storySecrets(t, env)
	texts := map[string]string{"the metrics of the Konnect operator": scrapeMetrics(t, ctx, env, ns, localenv.Package)}
	uninstall(t, ctx, env)
	assertNoSecretLeaked(t, ctx, env, values, texts)
	assertALMNeverForbidden(t, env)
}

// assertCatalogServes checks that the story's image CatalogSource serves the catalog image just pushed:
// status.image.digest is the pushed digest, the CatalogSource is Ready, and it lists the bundle published.
func assertCatalogServes(t *testing.T, ctx context.Context, story *localenv.Story, pub localenv.Published) {
	t.Helper()
	cs, err := story.WaitCatalogServes(ctx, localenv.CatalogName, pub.CatalogDigest)
	must(t, err)
	tag := story.Catalog.CatalogRef()
	if cs.Spec.Image == nil || cs.Spec.Image.Ref != tag {
		t.Errorf("CatalogSource %s polls %+v, want %s", cs.Name, cs.Spec.Image, tag)
	}
	if want := strings.TrimSuffix(tag, ":"+localenv.CatalogTag) + "@" + pub.CatalogDigest; cs.Status.Image.Ref != want {
		t.Errorf("CatalogSource %s: status.image.ref %s, want %s", cs.Name, cs.Status.Image.Ref, want)
	}
	t.Logf("CatalogSource %s serves %s@%s after the publish of %s: %d packages, %d bundles", cs.Name,
		cs.Spec.Image.Ref, cs.Status.Image.Digest, pub.Bundle, cs.Status.PackageCount, cs.Status.BundleCount)
}

// assertBundleImage checks that the OperatorVersion was resolved from the bundle image pushed: spec.bundle.image
// names it by digest and spec.bundle.digest is that digest. With localenv.CatalogWithObjects the catalog carries
// the manifests, and the OperatorVersion records their content digest instead.
func assertBundleImage(t *testing.T, ov *operatorsv1alpha1.OperatorVersion, pub localenv.Published) {
	t.Helper()
	if ov.Spec.Bundle == nil {
		t.Fatalf("OperatorVersion %s has no spec.bundle", ov.Name)
	}
	if localenv.CatalogWithObjects {
		t.Logf("OperatorVersion %s: spec.bundle %+v (the catalog carries olm.bundle.object: localenv.CatalogWithObjects)", ov.Name, *ov.Spec.Bundle)
		return
	}
	_, digest, _ := strings.Cut(pub.BundleImage, "@")
	if ov.Spec.Bundle.Image != pub.BundleImage || ov.Spec.Bundle.Digest != digest {
		t.Errorf("OperatorVersion %s: spec.bundle %+v, want image %s and digest %s", ov.Name, *ov.Spec.Bundle, pub.BundleImage, digest)
	}
}

// assertPulledFromRegistry checks that the node pulled the operator's image of version, running in namespace, from
// the registry (its mirror for alm.local; the node has no archives) and, when the catalog holds no manifests, that
// ALM pulled the bundle image from it.
func assertPulledFromRegistry(t *testing.T, env *localenv.Env, namespace, version string) {
	t.Helper()
	if n := env.Registry.ManifestRequests(localenv.Package); n == 0 {
		t.Errorf("the registry served no manifest of %s: the node did not pull it", localenv.Package)
	}
	want := localenv.ImageHost + "/" + localenv.Package + ":" + version
	pod := runningPod(t, env, namespace, localenv.Package)
	if st := pod.Status.ContainerStatuses; len(st) != 1 || st[0].Image != want || !strings.Contains(st[0].ImageID, "@sha256:") {
		t.Errorf("the operator's pod %s does not run %s pulled by digest: %+v", pod.Name, want, st)
	}
	if bundles := localenv.BundleRepository + "/" + localenv.Package; !localenv.CatalogWithObjects && env.Registry.ManifestRequests(bundles) == 0 {
		t.Errorf("the registry served no manifest of %s: ALM did not pull the bundle image", bundles)
	}
}

// assertTenantInstall checks what ALM installed for the tenant: the operator's Role in the tenant's namespace, and
// nothing cluster-wide, in a namespace that is not trusted.
func assertTenantInstall(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	namespace := &corev1.Namespace{}
	must(t, env.Client.Get(ctx, types.NamespacedName{Name: localenv.TenantNamespace}, namespace))
	if v, ok := namespace.Labels[operatorsv1alpha1.LabelTrustedInstalls]; ok {
		t.Errorf("namespace %s is labelled %s=%s; the tenant's install must not rely on it", localenv.TenantNamespace, operatorsv1alpha1.LabelTrustedInstalls, v)
	}
	owned := client.MatchingLabels{operatorsv1alpha1.LabelOwnerNamespace: localenv.TenantNamespace}
	roles := &rbacv1.RoleList{}
	must(t, env.Client.List(ctx, roles, client.InNamespace(localenv.TenantNamespace), owned))
	if len(roles.Items) == 0 {
		t.Errorf("no Role installed for %s in %s", localenv.TenantPackage, localenv.TenantNamespace)
	}
	for _, list := range []client.ObjectList{&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}} {
		must(t, env.Client.List(ctx, list, owned))
		if n := apimeta.LenList(list); n != 0 {
			t.Errorf("%T: %d cluster-wide objects installed for the tenant's namespace, want none", list, n)
		}
	}
	t.Logf("%s %s installed in %s as ServiceAccount %s: %d Role(s), nothing cluster-wide", localenv.TenantPackage, localenv.TenantVersion,
		localenv.TenantNamespace, localenv.TenantServiceAccount, len(roles.Items))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// upgrade publishes bundle and checks what a user sees: the CatalogSource serves the catalog image pushed, the new
// version Succeeded and alone, resolved from the bundle image pushed and run from the operator image the node
// runner pulled, the operator's objects adopted (same UIDs), Konnect ids unchanged, no Konnect create during the
// upgrade.
func upgrade(t *testing.T, ctx context.Context, env *localenv.Env, story *localenv.Story, bundle, version string, ids localenv.KonnectIDs) {
	t.Helper()
	before := operatorUIDs(t, ctx, env)
	creates := posts(env)
	begin := time.Now()
	pub, err := story.Publish(ctx, bundle)
	must(t, err)
	assertCatalogServes(t, ctx, story, pub)
	figure(t, "publish "+version+" -> catalog digest served", time.Since(begin))
	ov, err := story.WaitInstalled(ctx, ns, localenv.Package, version)
	must(t, err)
	figure(t, "publish "+version+" -> old version deleted", time.Since(begin))
	assertBundleImage(t, ov, pub)
	assertPulledFromRegistry(t, env, ns, version)
	must(t, env.WaitDeploymentAvailable(ctx, ns, localenv.Package, time.Minute))
	after := operatorUIDs(t, ctx, env)
	for key, uid := range before {
		if after[key] != uid {
			t.Errorf("after the upgrade to %s, %s has UID %q, was %q: not adopted", version, key, after[key], uid)
		}
	}
	now, err := story.WaitProgrammed(ctx, localenv.DemoNamespace)
	must(t, err)
	if now.String() != ids.String() {
		t.Errorf("Konnect ids after the upgrade to %s: %s, were %s", version, now, ids)
	}
	if n := posts(env) - creates; n != 0 {
		t.Errorf("%d Konnect creates during the upgrade to %s, want 0", n, version)
	}
}

// operatorUIDs are the UIDs of the objects the operator's versions hand over to each other.
func operatorUIDs(t *testing.T, ctx context.Context, env *localenv.Env) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: localenv.Package}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: localenv.Package}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "kongservices.configuration.konghq.com"}},
	} {
		must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		out[fmt.Sprintf("%T %s", obj, obj.GetName())] = obj.GetUID()
	}
	return out
}

// posts counts the create requests the simulator served.
func posts(env *localenv.Env) int64 {
	var n int64
	for endpoint, count := range env.Sim.Counters() {
		if strings.HasPrefix(endpoint, "POST ") {
			n += count
		}
	}
	return n
}

func assertCreatedOnce(t *testing.T, env *localenv.Env) {
	t.Helper()
	for kind, want := range map[konnectsim.Kind]int{
		konnectsim.KindControlPlane: 1, konnectsim.KindService: 1, konnectsim.KindRoute: 1, konnectsim.KindConsumer: 1,
	} {
		if got := len(env.Sim.ObjectsOf(kind)); got != want {
			t.Errorf("%d %s entities in Konnect, want %d", got, kind, want)
		}
	}
	if n := posts(env); n != 4 {
		t.Errorf("%d create requests for 4 entities; counters: %v", n, env.Sim.Counters())
	}
}

// assertOperatorRBAC uses the token the kubelet mounted into the operator's pod: it may do what the bundle grants and
// nothing else, neither another verb on what it may read nor anything cluster-scoped it was not given.
func assertOperatorRBAC(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	c := podClient(t, env, ns, localenv.Package)
	key := client.ObjectKey{Namespace: ns, Name: "no-such-object"}
	assertCalls(t, "the operator's token", "system:serviceaccount:"+ns+":", map[string]error{
		"list KongServices in every namespace": c.List(ctx, &configurationv1alpha1.KongServiceList{}),
		"list Secrets":                         c.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)),
		"get a KonnectGatewayControlPlane":     c.Get(ctx, key, &konnectv1alpha2.KonnectGatewayControlPlane{}),
		"get a Lease":                          c.Get(ctx, key, &coordinationv1.Lease{}),
	}, map[string]error{
		"create a Secret":       c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-allowed"}}),
		"delete a KongService":  c.Delete(ctx, &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-such-object"}}),
		"list Pods":             c.List(ctx, &corev1.PodList{}),
		"delete ALM":            c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: localenv.ALMNamespace, Name: localenv.ALMDeployment}}),
		"list Nodes":            c.List(ctx, &corev1.NodeList{}),
		"list CRDs":             c.List(ctx, &apiextensionsv1.CustomResourceDefinitionList{}),
		"list OperatorVersions": c.List(ctx, &operatorsv1alpha1.OperatorVersionList{}),
		"create a RoleBinding":  c.Create(ctx, roleBinding(ns, "cluster-admin")),
		"create a ClusterRoleBinding": c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "not-allowed"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}),
		"request a token for ALM's ServiceAccount": c.SubResource("token").Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: localenv.ALMNamespace, Name: "alm-manager"}}, &authenticationv1.TokenRequest{}),
	})
}

// assertALMRBAC uses the token of ALM's own pod (deployed from config/default): it is ALM's ServiceAccount, held to
// config/rbac's least-privilege role.
func assertALMRBAC(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	c := podClient(t, env, localenv.ALMNamespace, localenv.ALMDeployment)
	review := &authenticationv1.SelfSubjectReview{}
	must(t, c.Create(ctx, review))
	if want := "system:serviceaccount:" + localenv.ALMNamespace + ":alm-manager"; review.Status.UserInfo.Username != want {
		t.Errorf("ALM runs as %q, want its ServiceAccount %s", review.Status.UserInfo.Username, want)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "kongservices.configuration.konghq.com"}}
	assertCalls(t, "ALM's token", "system:serviceaccount:"+localenv.ALMNamespace+":alm-manager", map[string]error{
		"list OperatorVersions": c.List(ctx, &operatorsv1alpha1.OperatorVersionList{}),
		"list Secrets":          c.List(ctx, &corev1.SecretList{}),
		"get a CRD":             c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{}),
		// Granted by the ClusterRole ALM's crdaccess loop maintains, for the CRD update check.
		"list KongServices": c.List(ctx, &configurationv1alpha1.KongServiceList{}),
		// Read when an installing version's Deployment is not available, to say why in its Ready condition.
		"list Pods": c.List(ctx, &corev1.PodList{}),
	}, map[string]error{
		"delete a CRD":         c.Delete(ctx, crd),
		"delete a Pod":         c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-such-pod"}}),
		"list Nodes":           c.List(ctx, &corev1.NodeList{}),
		"update a KongService": c.Update(ctx, &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-such-object"}}),
		"request a token":      c.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: localenv.Package}}, &authenticationv1.TokenRequest{}),
	})
}

// assertALMNeverForbidden checks ALM's log: with config/rbac's least-privilege role, not one request was forbidden.
func assertALMNeverForbidden(t *testing.T, env *localenv.Env) {
	t.Helper()
	logs := env.Logs(localenv.ALMDeployment)
	if len(logs) == 0 {
		t.Fatalf("no log of %s/%s", localenv.ALMNamespace, localenv.ALMDeployment)
	}
	for path, log := range logs {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(strings.ToLower(line), "forbidden") {
				t.Errorf("ALM made a forbidden request (%s): %s", path, line)
				break
			}
		}
	}
}

func roleBinding(namespace, clusterRole string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "not-allowed"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}}
}

// podClient is a client with the ServiceAccount token of a Deployment's running pod.
func podClient(t *testing.T, env *localenv.Env, namespace, deployment string) client.Client {
	t.Helper()
	cfg, err := env.PodConfig(t.Context(), namespace, deployment)
	must(t, err)
	c, err := client.New(cfg, client.Options{Scheme: localenv.Scheme()})
	must(t, err)
	return c
}

// assertCalls checks calls made with one token: the allowed ones succeeded or found nothing (NotFound comes after
// authorization), the others were forbidden to user.
func assertCalls(t *testing.T, who, user string, allowed, forbidden map[string]error) {
	t.Helper()
	for what, err := range allowed {
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s may not %s, which its RBAC grants: %v", who, what, err)
		}
	}
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), user) {
			t.Errorf("%s may %s, which its RBAC does not grant (want forbidden to %s, got %v)", who, what, user, err)
		}
	}
}

func setServiceHost(t *testing.T, ctx context.Context, env *localenv.Env, host string) {
	t.Helper()
	svc := &configurationv1alpha1.KongService{}
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: localenv.DemoNamespace, Name: localenv.DemoService}, svc))
	svc.Spec.Host = host
	must(t, env.Client.Update(ctx, svc))
}

func waitServiceHostInKonnect(t *testing.T, ctx context.Context, env *localenv.Env, id, host string) {
	t.Helper()
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		for _, o := range env.Sim.ObjectsOf(konnectsim.KindService) {
			if o.ID == id && o.JSON["host"] == host {
				return nil
			}
		}
		return fmt.Errorf("service %s does not have host %s in Konnect: %v", id, host, env.Sim.ObjectsOf(konnectsim.KindService))
	}))
}

// failForward publishes, over the newest version of the package input, the next minor version whose process exits,
// then a patch of it that replaces it (neither with a hand-over), and returns the patch's version.
func failForward(t *testing.T, ctx context.Context, env *localenv.Env, story *localenv.Story, ids localenv.KonnectIDs) string {
	t.Helper()
	pkg, err := bundlegen.LoadPackage(filepath.Join(root, "hack", "bundles", "konnect-operator.yaml"))
	must(t, err)
	dir := t.TempDir()
	base := pkg.Versions[len(pkg.Versions)-1]
	base.Handoff = ""
	next := semver.MustParse(base.Version)
	next.Minor, next.Patch = next.Minor+1, 0
	crashingVersion, fixedVersion := next.String(), fmt.Sprintf("%d.%d.1", next.Major, next.Minor)
	crashing := base
	crashing.Version, crashing.Replaces, crashing.SkipRange = crashingVersion, pkg.BundleName(base.Version), ""
	crashing.Image = pkg.ImageFor(base)
	crashing.Args = append(append([]string{}, base.Args...), "--no-such-flag")
	crashing.LogsOnError = true // the kubelet keeps the log's tail as the termination message, which ALM quotes
	crashing.ProgressDeadlineSeconds = ptr.To[int32](15)
	must(t, bundlegen.WriteBundle(root, pkg, crashing, filepath.Join(dir, crashingVersion)))
	_, err = story.Publish(ctx, filepath.Join(dir, crashingVersion))
	must(t, err)
	failed := &operatorsv1alpha1.OperatorVersion{}
	must(t, localenv.Poll(ctx, 2*time.Minute, func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: pkg.BundleName(crashingVersion)}, failed); err != nil {
			return err
		}
		if failed.Status.Phase != operatorsv1alpha1.PhaseFailed {
			return fmt.Errorf("%s is %s: %s", crashingVersion, failed.Status.Phase, failed.Status.Message)
		}
		return nil
	}))
	for _, want := range []string{"exit code 1", "flag provided but not defined: -no-such-flag (see --help)"} {
		if !strings.Contains(failed.Status.Message, want) {
			t.Errorf("the failed version's message does not say %q: %s", want, failed.Status.Message)
		}
	}
	// The newest published version keeps running and syncing.
	old := &operatorsv1alpha1.OperatorVersion{}
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: pkg.BundleName(base.Version)}, old))
	if old.Status.Phase != operatorsv1alpha1.PhaseSucceeded {
		t.Errorf("%s is %s while %s failed, want Succeeded", base.Version, old.Status.Phase, crashingVersion)
	}
	setServiceHost(t, ctx, env, "while-failed.demo.svc")
	waitServiceHostInKonnect(t, ctx, env, ids["KongService/"+localenv.DemoService], "while-failed.demo.svc")

	fixed := base
	fixed.Version, fixed.Replaces, fixed.SkipRange, fixed.Image = fixedVersion, pkg.BundleName(crashingVersion), "", pkg.ImageFor(base)
	must(t, bundlegen.WriteBundle(root, pkg, fixed, filepath.Join(dir, fixedVersion)))
	_, err = story.Publish(ctx, filepath.Join(dir, fixedVersion))
	must(t, err)
	_, err = story.WaitInstalled(ctx, ns, localenv.Package, fixedVersion)
	must(t, err)
	must(t, env.WaitDeploymentAvailable(ctx, ns, localenv.Package, time.Minute))
	return fixedVersion
}

// laterVersions are the versions of the konnect-operator input after version, in order.
func laterVersions(t *testing.T, version string) []string {
	t.Helper()
	pkg, err := bundlegen.LoadPackage(filepath.Join(root, "hack", "bundles", "konnect-operator.yaml"))
	must(t, err)
	var out []string
	for _, v := range pkg.Versions {
		if semver.MustParse(v.Version).GT(semver.MustParse(version)) {
			out = append(out, v.Version)
		}
	}
	return out
}

// uninstall deletes the Konnect objects first (nothing is left in Konnect), then the AppType: its OperatorVersion,
// Deployment and RBAC go, the operator's process stops, and the CRDs stay (they hold user data).
func uninstall(t *testing.T, ctx context.Context, env *localenv.Env) {
	t.Helper()
	objs := env.DemoObjects(localenv.DemoNamespace)
	for i := len(objs) - 1; i >= 2; i-- { // children first; keep the Secret and the auth configuration
		must(t, client.IgnoreNotFound(env.Client.Delete(ctx, objs[i])))
	}
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		if left := env.Sim.Objects(); len(left) != 0 {
			return fmt.Errorf("%d entities left in Konnect: %v", len(left), left)
		}
		return nil
	}))
	must(t, env.Client.Delete(ctx, &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: localenv.Package}}))
	must(t, localenv.Poll(ctx, time.Minute, func() error {
		ovs := &operatorsv1alpha1.OperatorVersionList{}
		if err := env.Client.List(ctx, ovs, client.InNamespace(ns)); err != nil || len(ovs.Items) != 0 {
			return fmt.Errorf("%d OperatorVersions left (err %w)", len(ovs.Items), err)
		}
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: localenv.Package}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the operator's Deployment is still there (err %w)", err)
		}
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns)); err != nil || len(pods.Items) != 0 {
			return fmt.Errorf("%d pods left in %s (err %w)", len(pods.Items), ns, err)
		}
		return nil
	}))
	must(t, env.Client.Get(ctx, types.NamespacedName{Name: "kongservices.configuration.konghq.com"}, &apiextensionsv1.CustomResourceDefinition{}))
}
