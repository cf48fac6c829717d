// Package konnect holds the Konnect operator's chaos scenario (make test-chaos): the operator as a real process
// against a local Kubernetes control plane and the Konnect simulator, with Konnect failing, throttling and losing
// answers, and the operator killed in the middle of its work.
package konnect

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/almproject/alm/test/chaos"
	"github.com/almproject/alm/test/localkube"
)

// kubeAPI is the local Kubernetes control plane; nil when the chaos scenarios are switched off.
var kubeAPI *localkube.Cluster

func TestMain(m *testing.M) {
	// Without ALM_CHAOS=1 every test skips: no control plane is started for nothing.
	if os.Getenv(chaos.EnvRun) != "1" {
		os.Exit(m.Run())
	}
	root, err := localkube.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths:   []string{filepath.Join(root, "config", "konnect-operator", "crd")},
		NoControllerManager: true, // finalizers are the operator's own; no garbage collection is needed
	}, &kubeAPI))
}
