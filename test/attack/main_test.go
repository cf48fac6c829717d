// Package attack tries ALM's trust model as its attackers would: a tenant with rights in one namespace, a catalog
// publisher, a registry that lies. Every test acts through a real kube-apiserver with RBAC on, with the attacker's own
// token, against ALM running as its ServiceAccount with the RBAC that config/ gives it (applied with kubectl, as a
// cluster admin does). One test per attack; each names the guard it checks.
package attack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

const (
	almNamespace      = "alm-system"
	almServiceAccount = "alm-manager"
)

// configDirs are the directories of config/ a cluster admin applies besides the CRDs (kubectl apply -k each).
var configDirs = []string{"rbac", "admission"}

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

var applyOnce struct {
	sync.Once
	err error
}

// applyConfig applies configDirs with kubectl as the cluster admin, once per test binary.
func applyConfig(t *testing.T) {
	t.Helper()
	applyOnce.Do(func() {
		harness.EnsureNamespace(t, harness.Client(t, cp), almNamespace)
		bin, err := localkube.BinDir()
		if err != nil {
			applyOnce.err = err
			return
		}
		for _, dir := range configDirs {
			out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", cp.KubeconfigPath, "apply", "-k",
				filepath.Join("..", "..", "config", dir)).CombinedOutput()
			if err != nil {
				applyOnce.err = fmt.Errorf("kubectl apply -k config/%s: %w\n%s", dir, err, out)
				return
			}
		}
	})
	if applyOnce.err != nil {
		t.Fatal(applyOnce.err)
	}
}

// startALM runs every loop of ALM in one manager acting as ALM's ServiceAccount (alm-system/alm-manager, bound by
// config/rbac), with the cache and client options cmd/alm uses, and plays the kubelet for the Deployments it installs.
func startALM(t *testing.T, mutate ...func(*loops.Options)) *harness.Manager {
	t.Helper()
	applyConfig(t)
	selected, err := loops.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	opts := loops.Options{Registry: registry.New(), Namespace: almNamespace, InstallTimeout: 20 * time.Second,
		CatalogResync: 2 * time.Second, Bundles: loops.NewBundles(&image.BundleCache{Dir: t.TempDir()}, almNamespace),
		VersionFinalizers: loops.VersionFinalizers(selected)}
	for _, m := range mutate {
		m(&opts)
	}
	identity, err := cp.ServiceAccountConfig(t.Context(), almNamespace, almServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	harness.RunKubelet(t, harness.Client(t, cp), nil)
	return harness.StartManagerAs(t, identity, func(mgr ctrl.Manager) error {
		metrics.Watch(mgr.GetCache())
		for _, l := range selected {
			if err := l.Setup(mgr, opts); err != nil {
				return err
			}
		}
		return nil
	}, func(o *ctrl.Options) {
		o.Cache = loops.CacheOptions()
		o.Client = loops.ClientOptions()
	})
}

// tenant makes the attacker: a fresh namespace that no cluster admin trusts, and a ServiceAccount "tenant" in it
// holding rules in that namespace and clusterRules cluster-wide (none when nil). It returns the namespace and a client
// that acts with the ServiceAccount's token.
func tenant(t *testing.T, prefix string, rules, clusterRules []rbacv1.PolicyRule) (string, client.Client) {
	t.Helper()
	admin := harness.Client(t, cp)
	ns := harness.TenantNamespace(t, admin, prefix)
	const name = "tenant"
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subjects},
	}
	if clusterRules != nil {
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Rules: clusterRules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-" + name}, Subjects: subjects})
	}
	for _, obj := range objs {
		if err := admin.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return ns, clientAs(t, ns, name)
}

// clientAs is a client that acts with a token of ServiceAccount namespace/name.
func clientAs(t *testing.T, namespace, name string) client.Client {
	t.Helper()
	cfg, err := cp.ServiceAccountConfig(t.Context(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: harness.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
