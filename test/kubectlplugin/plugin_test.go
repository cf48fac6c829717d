// Package kubectlplugin tests that almctl works as the kubectl plugin kubectl-alm: found by kubectl's plugin
// discovery on PATH, and honouring kubectl's global flags, against a local API server without a node.
package kubectlplugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/almproject/alm/test/localkube"
)

const appType = `apiVersion: v1
kind: Namespace
metadata: {name: plugin-test}
---
apiVersion: operators.alm.dev/v1alpha1
kind: AppType
metadata: {name: konnect-operator, namespace: plugin-test}
spec: {package: konnect-operator}
`

// TestKubectlAlm: `kubectl alm status` runs almctl through kubectl's plugin discovery, with -n, --kubeconfig and
// --as passed through as kubectl's own flags.
func TestKubectlAlm(t *testing.T) {
	root, err := localkube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := localkube.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := localkube.Start(localkube.Options{NoControllerManager: true,
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	plugins := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "kubectl-alm"), "./cmd/almctl")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kubectl := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "kubectl"), args...)
		cmd.Env = append(os.Environ(), "PATH="+plugins+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG=/nonexistent")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := kubectl(appType, "--kubeconfig", cp.KubeconfigPath, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	if out, err := kubectl("", "plugin", "list"); err != nil || !strings.Contains(out, filepath.Join(plugins, "kubectl-alm")) {
		t.Errorf("kubectl plugin list does not find kubectl-alm (%v):\n%s", err, out)
	}
	out, err := kubectl("", "alm", "status", "-n", "plugin-test", "--kubeconfig", cp.KubeconfigPath)
	if err != nil || !strings.Contains(out, "konnect-operator") {
		t.Errorf("kubectl alm status -n plugin-test: want the AppType konnect-operator listed, got (%v):\n%s", err, out)
	}
	out, err = kubectl("", "alm", "status", "-n", "plugin-test", "--kubeconfig", cp.KubeconfigPath, "--as", "nobody")
	if err == nil || !strings.Contains(out, `"nobody" cannot list`) {
		t.Errorf("kubectl alm status --as nobody: want the API server to refuse user nobody, got (%v):\n%s", err, out)
	}
}
