package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/configmap"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/test/localkube"
)

var (
	almctl string // the built binary
	cp     *localkube.Cluster
)

// TestMain builds almctl once and runs the tests against it; publish tests use a real local control plane.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "almctl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	almctl = filepath.Join(dir, "almctl")
	if out, err := exec.Command("go", "build", "-o", almctl, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := localkube.RunTests(m, localkube.Options{NoControllerManager: true, CRDDirectoryPaths: []string{"../../config/crd/bases"}}, &cp)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const (
	etcd = "../../catalog/testdata/etcd"
	bad  = "../../catalog/testdata/bad"
	sdk  = "../../catalog/testdata/sdk/memcached-operator"
)

// run runs almctl and returns stdout, stderr and the exit code.
func run(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(almctl, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestCLI(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   []string
		noStdout []string
	}{
		{name: "help", args: []string{"--help"}, stdout: []string{"bundle", "catalog", "publish"}},
		{name: "bundle validate help", args: []string{"bundle", "validate", "--help"}, stdout: []string{"path: rule: detail"}},
		{name: "render help", args: []string{"catalog", "render", "--help"}, stdout: []string{"--output"}},
		{name: "resolve help", args: []string{"catalog", "resolve", "--help"}, stdout: []string{"--from", "--range", "--channel"}},
		{name: "graph help", args: []string{"catalog", "graph", "--help"}, stdout: []string{"Mermaid"}},
		{name: "bundle push help", args: []string{"bundle", "push", "--help"}, stdout: []string{"Examples:", "docker login", "@sha256:", "--insecure", "--ca-file"}},
		{name: "catalog push help", args: []string{"catalog", "push", "--help"}, stdout: []string{"Examples:", "--bundle-repo", "--with-objects", "olm.csv.metadata", "--insecure"}},
		{name: "render help image", args: []string{"catalog", "render", "--help"}, stdout: []string{"catalog image", "Examples:", "--ca-file"}},
		{name: "publish help", args: []string{"publish", "--help"}, stdout: []string{"--catalog", "--force", "--namespace"}},
		{name: "validate valid bundles", args: []string{"bundle", "validate", etcd + "/0.9.2", etcd + "/0.9.4"}, code: 0,
			noStdout: []string{": error", "olm-BundleNotValid"}},
		{name: "validate bad bundle", args: []string{"bundle", "validate", bad + "/invalid-semver/bad/1.0.0"}, code: 1,
			stdout: []string{"bad.v1.0.clusterserviceversion.yaml: invalid-semver: spec.version \"1.0\""}},
		{name: "validate several, one bad", args: []string{"bundle", "validate", etcd + "/0.9.4", bad + "/missing-csv/bad/1.0.0"}, code: 1,
			stdout: []string{"missing-csv: no ClusterServiceVersion"}},
		{name: "validate catalog dir", args: []string{"bundle", "validate", bad + "/replaces-cycle"}, code: 1,
			stdout: []string{"fbc/catalog.json: replaces-cycle: channel stable: cyc.v1.1.0 is in a replaces cycle"}},
		{name: "render json", args: []string{"catalog", "render", etcd}, stdout: []string{`"schema": "olm.package"`, `"name": "etcdoperator.v0.9.4"`, `"replaces": "etcdoperator.v0.9.2"`, `"olm.bundle.object"`}},
		{name: "render yaml", args: []string{"catalog", "render", etcd, "-o", "yaml"}, stdout: []string{"schema: olm.channel", "defaultChannel: singlenamespace-alpha"}},
		{name: "render bad format", args: []string{"catalog", "render", etcd, "-o", "xml"}, code: 1, stderr: []string{"use json or yaml"}},
		{name: "resolve fresh", args: []string{"catalog", "resolve", etcd, "--package", "etcd"},
			stdout: []string{"chosen: etcdoperator.v0.9.4 (0.9.4)", "etcdoperator.v0.9.2 (0.9.2) [" + etcd + "]: LowerVersion"}},
		{name: "resolve upgrade", args: []string{"catalog", "resolve", etcd, "--package", "etcd", "--from", "0.9.2"},
			stdout: []string{"upgrade path: etcdoperator.v0.9.2 -> etcdoperator.v0.9.4", "Installed"}},
		{name: "resolve out of range", args: []string{"catalog", "resolve", etcd, "--package", "etcd", "--range", "<0.9.3"},
			stdout: []string{"chosen: etcdoperator.v0.9.2", "etcdoperator.v0.9.4 (0.9.4) [" + etcd + "]: OutOfRange"}},
		{name: "resolve up to date", args: []string{"catalog", "resolve", etcd, "--package", "etcd", "--from", "0.9.4"},
			stdout: []string{"chosen: none"}},
		{name: "resolve unknown channel", args: []string{"catalog", "resolve", etcd, "--package", "etcd", "--channel", "nope"}, code: 1,
			stderr: []string{"channel not found"}},
		{name: "resolve unknown package", args: []string{"catalog", "resolve", etcd, "--package", "nope"}, code: 1, stderr: []string{"package not found"}},
		{name: "resolve needs package", args: []string{"catalog", "resolve", etcd}, code: 1, stderr: []string{"package"}},
		{name: "resolve shows rejected", args: []string{"catalog", "resolve", bad + "/fbc-invalid-skiprange", "--package", "skr"},
			stdout: []string{"chosen: skr.v1.0.0", "skr.v1.1.0 (?) [" + bad + "/fbc-invalid-skiprange]: RejectedBundle: invalid-skiprange"}},
		{name: "operator-sdk bundles validate", args: []string{"bundle", "validate", sdk + "/0.0.1", sdk + "/0.0.2", sdk + "/0.1.0"}, code: 0},
		{name: "operator-sdk bundles resolve", args: []string{"catalog", "resolve", sdk, "--package", "memcached-operator", "--from", "0.0.1"},
			stdout: []string{"chosen: memcached-operator.v0.1.0", "upgrade path: memcached-operator.v0.0.1 -> memcached-operator.v0.1.0"}},
		{name: "operator-sdk bundles graph", args: []string{"catalog", "graph", sdk, "--package", "memcached-operator"},
			stdout: []string{"-- replaces -->", `==>|"skipRange >=0.0.1 <0.1.0"|`}},
		{name: "graph", args: []string{"catalog", "graph", etcd, "--package", "etcd"},
			stdout: []string{"flowchart LR", "etcdoperator.v0.9.2 0.9.2", "-- replaces -->"}},
		{name: "graph unknown package", args: []string{"catalog", "graph", etcd, "--package", "nope"}, code: 1, stderr: []string{"package not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, nil, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.noStdout {
				if strings.Contains(stdout, s) {
					t.Errorf("stdout has %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// TestGraphSkips checks that the three edge kinds are drawn differently, on a catalog with all three.
func TestGraphSkips(t *testing.T) {
	dir := t.TempDir()
	fbc := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.0.1","replaces":"p.v1.0.0"},{"name":"p.v1.0.2","replaces":"p.v1.0.0","skips":["p.v1.0.1"]},{"name":"p.v1.1.0","replaces":"p.v1.0.2","skipRange":">=1.0.0 <1.1.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v1.0.1","package":"p","image":"example.com/p:1.0.1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.1"}}]}
{"schema":"olm.bundle","name":"p.v1.0.2","package":"p","image":"example.com/p:1.0.2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.2"}}]}
{"schema":"olm.bundle","name":"p.v1.1.0","package":"p","image":"example.com/p:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, nil, "catalog", "graph", dir, "--package", "p")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"-- replaces -->", "-. skips .->", `==>|"skipRange >=1.0.0 <1.1.0"|`} {
		if !strings.Contains(stdout, s) {
			t.Errorf("graph lacks %q:\n%s", s, stdout)
		}
	}
}

// TestPublish publishes the etcd bundles to the local control plane: validate, create, idempotent republish,
// refusal of different content, --force, and the catalog loads back from the ConfigMaps.
func TestPublish(t *testing.T) {
	env := []string{"KUBECONFIG=" + cp.KubeconfigPath}
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := run(t, env, "publish", etcd+"/0.9.2", "--catalog", "ops", "-n", "default")
	if code != 0 || !strings.Contains(stdout, "published etcdoperator.v0.9.2") {
		t.Fatalf("publish: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, env, "publish", etcd+"/0.9.2", "--catalog", "ops", "-n", "default")
	if code != 0 || !strings.Contains(stdout, "unchanged") {
		t.Fatalf("republish: exit %d\n%s", code, stdout)
	}
	if _, _, code := run(t, env, "publish", etcd+"/0.9.4", "--catalog", "ops", "-n", "default"); code != 0 {
		t.Fatalf("publish 0.9.4: exit %d", code)
	}

	// Same bundle name, different content: refused, then forced.
	changed := t.TempDir()
	copyTree(t, etcd+"/0.9.2", changed)
	csvPath := filepath.Join(changed, "manifests", "etcdoperator.v0.9.2.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csvPath)
	if err := os.WriteFile(csvPath, bytes.Replace(data, []byte("displayName: etcd"), []byte("displayName: etcd (changed)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, env, "publish", changed, "--catalog", "ops", "-n", "default")
	if code != 1 || !strings.Contains(stderr, "different content") {
		t.Fatalf("changed content must be refused: exit %d\n%s", code, stderr)
	}
	stdout, _, code = run(t, env, "publish", changed, "--catalog", "ops", "-n", "default", "--force")
	if code != 0 || !strings.Contains(stdout, "overwrote") {
		t.Fatalf("--force: exit %d\n%s", code, stdout)
	}

	// The same version under another bundle name: refused, then replaced with --force.
	renamed := t.TempDir()
	copyTree(t, etcd+"/0.9.4", renamed)
	csv94 := filepath.Join(renamed, "manifests", "etcdoperator.v0.9.4.clusterserviceversion.yaml")
	data, _ = os.ReadFile(csv94)
	if err := os.WriteFile(csv94, bytes.Replace(data, []byte("name: etcdoperator.v0.9.4"), []byte("name: etcd-renamed.v0.9.4"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, env, "publish", renamed, "--catalog", "ops", "-n", "default")
	if code != 1 || !strings.Contains(stderr, "version 0.9.4 of etcd is already published") {
		t.Fatalf("same version, other name, must be refused: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code = run(t, env, "publish", renamed, "--catalog", "ops", "-n", "default", "--force")
	if code != 0 || !strings.Contains(stdout, "removed configmap/ops-etcdoperator.v0.9.4") {
		t.Fatalf("--force: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, _, code := run(t, env, "publish", etcd+"/0.9.4", "--catalog", "ops", "-n", "default", "--force"); code != 0 {
		t.Fatalf("restore 0.9.4: exit %d", code)
	}

	// Invalid bundles are not published.
	_, _, code = run(t, env, "publish", bad+"/missing-csv/bad/1.0.0", "--catalog", "ops", "-n", "default")
	if code != 1 {
		t.Fatalf("invalid bundle: exit %d, want 1", code)
	}

	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: almv1alpha1.LabelCatalog + "=ops"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("want 2 bundle ConfigMaps, got %d", len(list.Items))
	}
	ix := index.New(index.Catalog{Name: "default/ops", Contents: configmap.Load(list.Items)})
	res, err := ix.Resolve(index.Request{Package: "etcd", From: "0.9.2"})
	if err != nil || res.Chosen == nil || res.Chosen.Name != "etcdoperator.v0.9.4" {
		t.Fatalf("resolve from ConfigMaps: %v\n%s\n%v", err, res.Explain(), ix.Problems())
	}
	if ov, err := res.OperatorVersion("default"); err != nil || ov.Spec.DisplayName != "etcd" {
		t.Fatalf("OperatorVersion from ConfigMap: %v %+v", err, ov)
	}
}

// TestPublishLargeBundle publishes a bundle of almost 1 MiB (a large CRD schema, like real operators ship).
func TestPublishLargeBundle(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, etcd+"/0.9.4", dir)
	var sb strings.Builder
	sb.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n")
	for i := 0; sb.Len() < bundle.MaxBundleSize-30_000; i++ {
		fmt.Fprintf(&sb, "  panel-%06d.json: '{\"title\": \"Panel %d\", \"type\": \"graph\", \"targets\": [{\"expr\": \"rate(etcd_requests_total{instance=~\\\"%d\\\"}[5m])\"}]}'\n", i, i, i*7919)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "dashboards.configmap.yaml"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBECONFIG=" + cp.KubeconfigPath}
	stdout, stderr, code := run(t, env, "publish", dir, "--catalog", "big", "-n", "default")
	if code != 0 {
		t.Fatalf("publish large: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cs, _ := kubernetes.NewForConfig(cp.Config)
	list, err := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{LabelSelector: almv1alpha1.LabelCatalog + "=big"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %d", err, len(list.Items))
	}
	b, problems := configmap.Decode(&list.Items[0])
	if b == nil {
		t.Fatalf("decode: %v", problems)
	}
	m, _ := b.Manifests()
	if len(m.Objects) != 1 || m.Objects[0].GetName() != "dashboards" {
		t.Fatalf("objects: %v", m.Objects)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
