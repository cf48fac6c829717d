package metrics

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{NoControllerManager: true,
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}}, &cp))
}

// TestVersionsInReadsTheCachesObjects: a scrape reads the OperatorVersions of the manager's cache where they are,
// without a copy of each (a List makes one even with UnsafeDisableDeepCopy), and sees every one of them.
func TestVersionsInReadsTheCachesObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operatorsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scrape-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pkg.v1.0.0", "pkg.v2.0.0", "other.v1.0.0"} {
		ov := &operatorsv1alpha1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: operatorsv1alpha1.OperatorVersionSpec{PackageName: "pkg"}}
		if err := c.Create(t.Context(), ov); err != nil {
			t.Fatal(err)
		}
	}
	informers, err := cache.New(cp.Config, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(t.Context()) }()

	// inNamespace is what reader holds of the test's namespace (a test run again shares the cluster).
	inNamespace := func(reader client.Reader) []*operatorsv1alpha1.OperatorVersion {
		t.Helper()
		all, err := versionsIn(t.Context(), reader)
		if err != nil {
			t.Fatal(err)
		}
		var out []*operatorsv1alpha1.OperatorVersion
		for _, ov := range all {
			if ov.Namespace == ns.Name {
				out = append(out, ov)
			}
		}
		return out
	}
	var first []*operatorsv1alpha1.OperatorVersion
	deadline := time.Now().Add(30 * time.Second)
	for len(first) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the cache holds %d OperatorVersions of namespace %s after 30s, want 3", len(first), ns.Name)
		}
		time.Sleep(50 * time.Millisecond)
		first = inNamespace(informers)
	}
	again := inNamespace(informers)
	byName := map[string]*operatorsv1alpha1.OperatorVersion{}
	for _, ov := range first {
		byName[ov.Name] = ov
	}
	for _, ov := range again {
		if byName[ov.Name] != ov {
			t.Errorf("two scrapes read OperatorVersion %s at two addresses: a copy per scrape, want the cache's own object", ov.Name)
		}
	}

	// Any other reader is listed.
	if listed := inNamespace(c); len(listed) != 3 {
		t.Errorf("from a client: %d OperatorVersions of namespace %s, want 3", len(listed), ns.Name)
	}
}
