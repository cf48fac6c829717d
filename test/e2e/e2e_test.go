// Package e2e tells ALM's whole story on a real cluster with one real node (test/localnode: containerd, runc,
// kubelet, kube-proxy): ALM deployed with `kubectl apply -k config/default` and running as a pod from its image,
// pulled through the node's registry mirror; the Konnect operator published from bundles/ as bundle images and a
// catalog image to that registry, installed from an image CatalogSource and running as pods the same way; the
// Konnect simulator over HTTP. Every assertion is something a user can see.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
)

var (
	root   string
	almctl string // built by TestMain
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	var err error
	if root, err = localkube.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := localkube.BinDir(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: skipped: %v (run make tools)\n", err)
		return 0
	}
	// Always rebuilt (as `make images` does), so the processes run the code under test, not an older build.
	images := exec.Command("go", "run", "./hack/images/cmd/images", "build", "--root", root, "--out", filepath.Join(root, "bin", "images"))
	images.Dir, images.Stderr = root, os.Stderr
	if err := images.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building the images: %v\n", err)
		return 1
	}
	// almctl too, for `almctl status` on the story's cluster.
	dir, err := os.MkdirTemp("", "e2e-almctl-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	almctl = filepath.Join(dir, "almctl")
	build := exec.Command("go", "build", "-o", almctl, "./cmd/almctl")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building almctl: %v\n", err)
		return 1
	}
	return m.Run()
}

// start brings up a local environment for one test and the story on it.
func start(t testing.TB) (context.Context, *localenv.Env, *localenv.Story) {
	t.Helper()
	return startWith(t, localenv.Options{})
}

// startWith is start with options (Root and StateDir are the test's).
func startWith(t testing.TB, o localenv.Options) (context.Context, *localenv.Env, *localenv.Story) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: not in -short")
	}
	ctx := t.Context()
	dir := t.TempDir()
	o.Root, o.StateDir = root, dir
	env, err := localenv.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for path, log := range env.Logs("") {
				t.Logf("---- %s (last 3000 bytes)\n%s", path, tail(log, 3000))
			}
			if data, err := os.ReadFile(filepath.Join(dir, "node.log")); err == nil {
				t.Logf("---- the node's log (last 3000 bytes)\n%s", tail(string(data), 3000))
			}
		}
		env.Stop()
		if env.Sim != nil { // every request and answer the simulator saw, checked against Kong's OpenAPI document
			if err := env.Sim.SpecErr(); err != nil {
				t.Error(err)
			}
		}
	})
	story := localenv.NewStory(env, testWriter{t})
	story.Timeout = 3 * time.Minute
	return ctx, env, story
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// testWriter sends the story's lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// figure logs a measured duration under a stable prefix, so that the figures can be collected from a run.
func figure(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("FIGURE %-45s %6.1fs", what, d.Seconds())
}
