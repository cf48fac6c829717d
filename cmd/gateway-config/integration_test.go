package main

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{"../../config/konnect-operator/crd"}, NoControllerManager: true,
	}, &cp))
}

// TestSummaryFollowsKongServices runs the operator against the local control plane: the summary appears at start,
// then lists a KongService created in the watched namespace, and ignores one in another namespace.
func TestSummaryFollowsKongServices(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = configurationv1alpha1.AddToScheme(scheme)
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig=" + cp.KubeconfigPath, "--watch-namespace=team-a",
			"--health-probe-bind-address=127.0.0.1:0"})
	}()
	waitForSummary(t, c, done, "0", "")

	for _, ns := range []string{"team-a", "team-b"} {
		ks := &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns}}
		ks.Spec.Host, ks.Spec.Port = "echo."+ns+".svc", 8080
		ks.Spec.ControlPlaneRef = &configurationv1alpha1.ControlPlaneRef{
			Type:                 configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
			KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: "demo"},
		}
		if err := c.Create(ctx, ks); err != nil {
			t.Fatal(err)
		}
	}
	waitForSummary(t, c, done, "1", "echo echo.team-a.svc:8080 programmed=Unknown\n")
}

func waitForSummary(t *testing.T, c client.Client, done <-chan error, count, services string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the operator stopped: %v", err)
		default:
		}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: SummaryName}, cm)
		if err == nil && cm.Data["count"] == count && cm.Data["services"] == services {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("ConfigMap team-a/%s data = %q, want count %s services %q", SummaryName, cm.Data, count, services)
}
