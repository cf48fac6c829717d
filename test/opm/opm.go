// Package opm runs the pinned opm binary (operator-registry's CLI, built into bin/opm from hack/tools/opm) in tests,
// so that what ALM writes and reads is checked against the reference implementation of the formats.
//
// Every run gets a fresh HOME, TMPDIR and XDG directories in the test's temporary directory, with a policy.json that
// accepts any image (opm's image library refuses to pull without one), so a run never reads or writes the user's
// configuration, credentials or caches. Registries on loopback speak plain HTTP: pass "--use-http" (see
// hack/tools/opm/README.md).
package opm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/almproject/alm/test/localkube"
)

// acceptAnything is the containers/image signature policy that accepts every image, unsigned included.
const acceptAnything = `{"default":[{"type":"insecureAcceptAnything"}]}`

// Path returns the opm binary: $ALM_BIN_DIR/opm, else <repo>/bin/opm. It fails the test when the binary is missing.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := localkube.BinDir()
	if err != nil {
		t.Fatalf("finding opm: %v", err)
	}
	p := filepath.Join(dir, "opm")
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		t.Fatalf("opm not found at %s: build it with `make tools` (from hack/tools/opm), or set ALM_BIN_DIR", p)
	}
	return p
}

// Run runs opm with args until it exits or the test's context ends, and returns its standard output. A failure's
// error carries opm's standard error.
func Run(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	return RunContext(t.Context(), t, args...)
}

// RunContext is Run with a context of the caller's.
func RunContext(ctx context.Context, t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	cmd := Command(ctx, t, t.TempDir(), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("opm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Command returns opm with args, not started, in an isolated environment under dir (HOME, TMPDIR and XDG
// directories, the accept-anything policy), for a caller that runs it itself, e.g. to read its resource usage. opm
// leaves its image cache in dir's tmp; removing dir removes it. It fails the test when the binary is missing.
func Command(ctx context.Context, t testing.TB, dir string, args ...string) *exec.Cmd {
	t.Helper()
	bin := Path(t)
	env, err := isolatedEnv(dir)
	if err != nil {
		t.Fatalf("preparing opm's environment: %v", err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	return cmd
}

// isolatedEnv returns an environment whose HOME, TMPDIR and XDG directories are under dir, with the accept-anything
// policy in HOME/.config/containers/policy.json, and nothing else of the caller's environment but PATH.
func isolatedEnv(dir string) ([]string, error) {
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	dirs := map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_RUNTIME_DIR": filepath.Join(dir, "run"),
		"DOCKER_CONFIG":   filepath.Join(home, ".docker"),
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp}
	for _, d := range []string{home, tmp, filepath.Join(home, ".config", "containers")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	for k, v := range dirs {
		if err := os.MkdirAll(v, 0o700); err != nil {
			return nil, err
		}
		env = append(env, k+"="+v)
	}
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	return env, os.WriteFile(policy, []byte(acceptAnything), 0o600)
}
