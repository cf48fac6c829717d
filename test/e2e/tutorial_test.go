package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/almproject/alm/test/tutorial"
)

// TestTutorial runs the commands of docs/tutorial.md as written, in order, in one shell, on a fresh local
// environment (what `make run ARGS=--no-demo` starts): a reader following the page gets what it says.
func TestTutorial(t *testing.T) {
	_, env, _ := start(t)
	cmds, err := tutorial.Commands(root)
	if err != nil {
		t.Fatal(err)
	}
	// The page runs from the repository root with the environment's state in .localenv and the binaries in bin/:
	// a directory laid out the same way, with this run's state and the almctl built from the code under test.
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	for link, target := range map[string]string{
		"bin/kubectl": filepath.Join(root, "bin", "kubectl"), "bin/almctl": almctl,
		"bundles": filepath.Join(root, "bundles"), ".localenv": env.StateDir,
	} {
		must(t, os.Symlink(target, filepath.Join(dir, link)))
	}
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "echo '+ %s:%d'\n%s\n", tutorial.Page, c.Line, c.Text)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", script.String())
	sh.Dir = dir
	sh.Env = append(os.Environ(), "KUBECONFIG=", "HOME="+dir)
	begin := time.Now()
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the tutorial's commands failed: %v\n%s", err, out)
	}
	t.Logf("the tutorial's %d commands ran in %s", len(cmds), time.Since(begin).Round(time.Second))
	for _, want := range []string{"Ready", "konnect-operator.v1.1.0", "condition met"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tutorial's output does not show %q:\n%s", want, out)
		}
	}
}
