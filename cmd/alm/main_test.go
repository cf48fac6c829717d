package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/localkube"
)

var (
	cp     *localkube.Cluster
	almBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "alm-bin-")
	if err != nil {
		panic(err)
	}
	almBin = filepath.Join(dir, "alm")
	if out, err := exec.Command("go", "build", "-o", almBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building alm: %v\n%s", err, out)
		os.Exit(1)
	}
	code := localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths:   []string{filepath.Join("..", "..", "config", "crd", "bases")},
		NoControllerManager: true,
	}, &cp)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// metricsReaderToken returns the token of a ServiceAccount bound to the ClusterRole alm-metrics-reader as
// config/rbac ships it.
func metricsReaderToken(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := cs.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	token, err := cp.ServiceAccountToken(t.Context(), "default", "scraper")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// waitStatus polls url with token (none when empty) until it answers want, for 30s.
func waitStatus(t *testing.T, url, token string, want int, logs fmt.Stringer) {
	t.Helper()
	// ALM's metrics certificate is self-signed.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer %d within 30s (last: %v)\nlogs:\n%s", url, want, err, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The manager starts against a real API server, serves its probes (plain HTTP) and its metrics (HTTPS, to a token
// bound to alm-metrics-reader only, as it is configured by default), and stops on SIGTERM.
func TestManagerServesProbesAndMetrics(t *testing.T) {
	probe, metrics := freePort(t), freePort(t)
	token := metricsReaderToken(t)
	cmd := exec.Command(almBin, "--kubeconfig", cp.KubeconfigPath,
		"--health-probe-bind-address", probe, "--metrics-bind-address", metrics,
		"--leader-elect", "--leader-election-namespace", "default")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	waitStatus(t, "http://"+probe+"/healthz", "", http.StatusOK, &logs)
	waitStatus(t, "http://"+probe+"/readyz", "", http.StatusOK, &logs)
	waitStatus(t, "https://"+metrics+"/metrics", token, http.StatusOK, &logs)
	waitStatus(t, "https://"+metrics+"/metrics", "", http.StatusUnauthorized, &logs)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("alm exited with %v after SIGINT\nlogs:\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("alm did not stop within 30s of SIGINT\nlogs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "Starting manager") {
		t.Errorf("structured start-up log missing:\n%s", logs.String())
	}
}

func TestHelpExplainsFlags(t *testing.T) {
	out, err := exec.Command(almBin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("alm --help: %v\n%s", err, out)
	}
	for _, flag := range []string{"--loops", "--leader-elect", "--health-probe-bind-address", "--metrics-bind-address", "--metrics-secure",
		"--metrics-cert-dir", "--kubeconfig", "--zap-log-level", "--directory-catalog-root", "--bundle-cache-bytes", "--catalog-scratch-dir",
		"--catalog-scratch-bytes"} {
		name := strings.TrimPrefix(flag, "-")
		if !strings.Contains(string(out), name) {
			t.Errorf("--help does not explain %s:\n%s", flag, out)
		}
	}
}

func TestUnknownLoopIsRefused(t *testing.T) {
	out, err := exec.Command(almBin, "--loops", "nosuchloop").CombinedOutput()
	if err == nil {
		t.Fatalf("alm --loops nosuchloop succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), `unknown loop or group "nosuchloop"`) {
		t.Errorf("error does not name the bad loop:\n%s", out)
	}
}

// Byte flags take Kubernetes quantities and refuse what is not a positive number of bytes.
func TestByteFlags(t *testing.T) {
	o, _, err := parseFlags([]string{"--bundle-cache-bytes=512Mi", "--catalog-scratch-bytes=3Gi"})
	if err != nil || o.bundleCacheBytes.Value() != 512<<20 || o.catalogScratchBytes.Value() != 3<<30 {
		t.Fatalf("parsed %v, %v", o, err)
	}
	if o, _, _ := parseFlags(nil); o.bundleCacheBytes.Value() != 1<<30 || o.catalogScratchBytes.Value() != 2<<30 {
		t.Errorf("defaults %s, %s; want 1Gi, 2Gi", &o.bundleCacheBytes, &o.catalogScratchBytes)
	}
	for _, bad := range []string{"--bundle-cache-bytes=0", "--catalog-scratch-bytes=-1Gi", "--catalog-scratch-bytes=lots"} {
		if _, _, err := parseFlags([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
