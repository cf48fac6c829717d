package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The manager starts against a real API server, serves its probes and metrics, and stops on SIGTERM.
func TestManagerServesProbesAndMetrics(t *testing.T) {
	probe, metrics := freePort(t), freePort(t)
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
	for _, url := range []string{"http://" + probe + "/healthz", "http://" + probe + "/readyz", "http://" + metrics + "/metrics"} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not answer 200 within 30s (last: %v)\nlogs:\n%s", url, err, logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
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
	for _, flag := range []string{"--loops", "--leader-elect", "--health-probe-bind-address", "--metrics-bind-address", "--kubeconfig", "--zap-log-level",
		"--bundle-cache-bytes", "--catalog-scratch-dir", "--catalog-scratch-bytes"} {
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
