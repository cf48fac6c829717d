// Package workloads tests ALM's loops against operators that run as real pods: webhooks called by the real
// kube-apiserver, serving certificates renewed in place and rolled out, and a rollback after a readiness probe fails.
//
// One local environment (test/localenv) serves the whole package: a local cluster with one real node (containerd,
// runc, kubelet, kube-proxy) and its registry, without ALM deployed (localenv.Options.NoALM). ALM's loops run in the
// test process (harness.StartManager, as test/integration runs them), so a test can stop and start them and move
// their clock; they reach a webhook Service's cluster IP from the host through kube-proxy, as from a pod. The
// operators' images are pushed to the registry as alm.local/<name>:<tag> and pulled by containerd.
package workloads

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/loopstest"
)

var (
	// env is the package's local environment; cp its cluster.
	env *localenv.Env
	cp  *localkube.Cluster
	// root is the repository root.
	root string
)

const almNamespace = "alm-system"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "workloads: skipped in -short (the tests need the real node)")
		return 0
	}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	var err error
	if root, err = localkube.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "alm-workloads-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "workloads: the environment's logs (the cluster's kube.log, the node's node.log) are kept in %s\n", dir)
		}
	}()
	start := time.Now()
	if env, err = localenv.Start(context.Background(), localenv.Options{Root: root, StateDir: dir, NoALM: true}); err != nil {
		fmt.Fprintf(os.Stderr, "workloads: starting the local environment (run make tools images first): %v\n", err)
		return code
	}
	fmt.Fprintf(os.Stderr, "workloads: the local environment started in %s (a wait for another run's node included)\n", time.Since(start).Round(100*time.Millisecond))
	defer func() {
		stop := time.Now()
		env.Stop()
		fmt.Fprintf(os.Stderr, "workloads: the local environment stopped in %s\n", time.Since(stop).Round(100*time.Millisecond))
	}()
	cp = env.CP
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		fmt.Fprintf(os.Stderr, "workloads: installing ALM's CRDs: %v\n", err)
		return code
	}
	code = m.Run()
	return code
}

// startALM runs the loops named by spec in the test's process (loopstest.Start), with options changed by mutate.
func startALM(t *testing.T, spec string, mutate ...func(*loops.Options)) *harness.Manager {
	t.Helper()
	return loopstest.Start(t, cp, almNamespace, spec, mutate...)
}

// What the tests declare and wait on, shared with test/integration.
var (
	catalogSource = loopstest.CatalogSource
	appType       = loopstest.AppType
	waitAppType   = loopstest.WaitAppType
	installed     = loopstest.Installed
	waitOV        = loopstest.WaitOV
)
