// Package alm_test holds ALM's chaos scenarios (make test-chaos): ALM, as a real process built from cmd/alm, is
// killed with SIGKILL at a random point of an install and of an upgrade and started again; kube-apiserver is
// restarted in the middle of an upgrade while ALM keeps running. Every run must converge to the state a run without
// faults ends in: one OperatorVersion, Succeeded; adopted objects with their UIDs; nothing duplicated, lost, orphaned
// or stuck on a finalizer.
//
// One local control plane (etcd, kube-apiserver, kube-controller-manager with the garbage collector) serves every
// run; each run has a namespace and a package of its own (a harness.Demo operator published into a ConfigMap
// CatalogSource in that namespace), so runs share nothing but ALM. There is no kubelet: the harness marks the
// operator's Deployments available, as the deployment controller would once the pods run.
//
// The runs are random but replayable: the seed is logged, and ALM_CHAOS_SEED=<seed> replays it. ALM_CHAOS_RUNS and
// ALM_CHAOS_APISERVER_RUNS change the number of runs (20 and 5); ALM_CHAOS_KEEP=1 keeps the logs of a passing run.
package alm_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/almproject/alm/test/chaos"
	"github.com/almproject/alm/test/localkube"
)

var (
	cp *localkube.Cluster
	// almBin is cmd/alm built for this test binary; stateDir holds ALM's and the cluster's logs, and the bundles.
	almBin, stateDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(chaos.EnvRun) != "1" {
		os.Exit(m.Run()) // every test skips (chaos.Require): no build, no cluster
	}
	os.Exit(runChaos(m))
}

func runChaos(m *testing.M) int {
	var err error
	if stateDir, err = os.MkdirTemp("", "alm-chaos-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	almBin = filepath.Join(stateDir, "alm")
	root, err := localkube.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	build := exec.Command("go", "build", "-o", almBin, "./cmd/alm")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cmd/alm: %v\n%s", err, out)
		return 1
	}
	kubeLog, err := os.Create(filepath.Join(stateDir, "kube.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kubeLog.Close()
	code := localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")},
		Output:            kubeLog,
	}, &cp)
	if code == 0 && os.Getenv("ALM_CHAOS_KEEP") == "" {
		_ = os.RemoveAll(stateDir)
	} else {
		fmt.Fprintf(os.Stderr, "chaos: ALM's logs (alm.log), the cluster's (kube.log) and the bundles are kept in %s\n", stateDir)
	}
	return code
}
