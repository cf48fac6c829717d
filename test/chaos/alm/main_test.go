// Package alm_test holds ALM's chaos scenarios (make test-chaos): ALM, deployed as users deploy it, is killed with
// SIGKILL at a random point of an install and of an upgrade and started again as a kubelet would; kube-apiserver is
// restarted in the middle of an upgrade. Every run must converge to the state a run without
// faults ends in: one OperatorVersion, Succeeded; adopted objects with their UIDs; nothing duplicated, lost, orphaned
// or stuck on a finalizer.
//
// One local environment (test/localenv, what `make run` and the e2e tests start) serves every run: a local cluster
// with one real node (kubelet, containerd, runc, kube-proxy), ALM deployed by `kubectl apply -k config/default` and
// running as a pod from its image (bin/images, pulled through the node's registry mirror) with its own
// ServiceAccount's token, so config/rbac is what it may do, and --leader-elect as config/manager passes it. The
// operators the runs install (a test program, test/testapp, pushed as each run's image) run as pods
// too, and the deployment controller makes their Deployments Available. kube-apiserver writes an audit log of ALM's
// writes (Lease renewals left out), which is how the faults are placed.
//
// Each run has a namespace and a package of its own (a harness.Demo operator published into a ConfigMap
// CatalogSource in that namespace), so runs share nothing but ALM.
//
// The runs are random but replayable: the seed is logged, and ALM_CHAOS_SEED=<seed> replays it. ALM_CHAOS_RUNS and
// ALM_CHAOS_APISERVER_RUNS change the number of runs (20 and 10); ALM_CHAOS_KEEP=1 keeps the logs of a passing run.
package alm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/almproject/alm/test/chaos"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/testapp"
)

// almUser is ALM's identity as config/default deploys it: the ServiceAccount alm-manager in alm-system.
const almUser = "system:serviceaccount:" + localenv.ALMNamespace + ":alm-manager"

var (
	env *localenv.Env
	// stateDir holds the environment's state and logs (the cluster's and the node's), the audit log and the bundles;
	// pod logs are on the node (localnode.RootDir/pods) while it runs.
	stateDir string
	// operatorImage is what every run's operator runs, pushed under the run's own image name.
	operatorImage v1.Image
)

func TestMain(m *testing.M) {
	if os.Getenv(chaos.EnvRun) != "1" {
		os.Exit(m.Run()) // every test skips (chaos.Require): no build, no cluster
	}
	os.Exit(runChaos(m))
}

func runChaos(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	var err error
	if stateDir, err = os.MkdirTemp("", "alm-chaos-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 && os.Getenv("ALM_CHAOS_KEEP") == "" {
			_ = os.RemoveAll(stateDir)
		} else {
			fmt.Fprintf(os.Stderr, "chaos: the environment's logs (the cluster's env/kube.log, the node's env/node.log, "+
				"the pods' env/pod-logs, the audit log) and the bundles are kept in %s\n", stateDir)
		}
	}()
	if err := startEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return code
	}
	defer env.Stop()
	code = m.Run()
	if code != 0 || os.Getenv("ALM_CHAOS_KEEP") != "" {
		if _, err := env.SavePodLogs(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos: saving the pods' logs:", err)
		}
	}
	return code
}

// startEnv builds the operators' image and starts the local environment with ALM deployed from config/default.
func startEnv() error {
	root, err := localkube.RepoRoot()
	if err != nil {
		return err
	}
	if operatorImage, err = testapp.Build(root); err != nil {
		return err
	}
	policy := filepath.Join(stateDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	env, err = localenv.Start(context.Background(), localenv.Options{
		Root: root, StateDir: filepath.Join(stateDir, "env"),
		APIServerFlags: map[string]string{
			"audit-policy-file": policy, "audit-log-path": auditPath(), "audit-log-format": "json", "audit-log-mode": "blocking",
		},
		// A kubelet configured with crashLoopBackOff.maxContainerRestartPeriod: 1s: each SIGKILLed ALM starts again
		// after 1s, not after a backoff grown by the previous runs' kills.
		MaxRestartBackoff: time.Second,
	})
	if err != nil {
		return fmt.Errorf("starting the local environment (run make images first): %w", err)
	}
	return nil
}
