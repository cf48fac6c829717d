package localnode_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	hackimages "github.com/almproject/alm/hack/images"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/localnode"
)

// crashEnv makes the test binary a run that starts a node and is then killed (TestCrashedRunIsCleanedUp).
const crashEnv = "ALM_LOCALNODE_CRASH"

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) != "" {
		crashingRun()
	}
	os.Exit(m.Run())
}

// crashingRun starts a cluster and a node with a running pod, says "up" on stdout and waits to be killed.
func crashingRun() {
	cp, node, err := startNode(context.Background(), os.Getenv(crashEnv), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_, _ = cp, node
	fmt.Println("up")
	select {}
}

// startNode starts a cluster for a node, a registry with bin/images as the node's mirror for alm.local, the node,
// and a Deployment of the sandbox image on it; logs go to a file in dir.
func startNode(ctx context.Context, dir string, status io.Writer) (*localkube.Cluster, *localnode.Node, error) {
	bin, err := localkube.BinDir()
	if err != nil {
		return nil, nil, err
	}
	mirror, err := startRegistry(ctx, filepath.Join(bin, "images"))
	if err != nil {
		return nil, nil, err
	}
	ip, err := localnode.HostIP()
	if err != nil {
		return nil, nil, err
	}
	logs, err := os.Create(filepath.Join(dir, "node.log"))
	if err != nil {
		return nil, nil, err
	}
	cp, err := localkube.Start(localkube.Options{Node: &localkube.NodeOptions{IP: ip}, Output: logs})
	if err != nil {
		return nil, nil, err
	}
	node, err := localnode.Start(ctx, localnode.Options{
		Cluster: cp, Output: logs, SandboxImage: hackimages.PauseImage, Status: status,
		Mirrors: map[string]localnode.Mirror{"alm.local": {URL: "http://" + mirror}},
	})
	if err != nil {
		out, _ := os.ReadFile(logs.Name())
		_ = cp.Stop()
		return nil, nil, fmt.Errorf("%w\n%s", err, tail(string(out), 60))
	}
	if err := runPause(ctx, cp); err != nil {
		_ = node.Stop()
		_ = cp.Stop()
		return nil, nil, err
	}
	return cp, node, nil
}

// TestNode starts a cluster with a real node, runs a Deployment of the sandbox image through the registry mirror,
// and checks that stopping the node leaves the machine as it was.
func TestNode(t *testing.T) {
	started := time.Now()
	cp, node, err := startNode(t.Context(), t.TempDir(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	t.Logf("node Ready and a pod Available %.1fs after start", time.Since(started).Seconds())
	if err := node.Stop(); err != nil {
		t.Fatalf("stopping the node: %v", err)
	}
	if node.HostBefore != node.HostAfter {
		t.Errorf("the machine is not as before the node:\n%s", diff(node.HostBefore, node.HostAfter))
	}
}

// TestCrashedRunIsCleanedUp: a run killed with its node up leaves its changes to the machine behind; the next
// start cleans them up (the sysctls back to what the killed run recorded, its directories and record gone) and
// starts, and its stop leaves the machine as it was after that cleanup.
func TestCrashedRunIsCleanedUp(t *testing.T) {
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), crashEnv+"="+t.TempDir())
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "up\n" {
		_ = child.Process.Kill()
		t.Fatalf("the crashing run did not start its node: %q", line)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	data, err := os.ReadFile(localnode.RecordFile)
	if err != nil {
		t.Fatalf("the killed run left no record of what to clean up: %v", err)
	}
	var record struct {
		Sysctls map[string]string `json:"sysctls"`
	}
	if err := json.Unmarshal(data, &record); err != nil || len(record.Sysctls) == 0 {
		t.Fatalf("the killed run's record %s: %v: %s", localnode.RecordFile, err, data)
	}
	var status strings.Builder
	cp, node, err := startNode(t.Context(), t.TempDir(), &status)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	if !strings.Contains(status.String(), "cleaning up after the node of pid") {
		t.Errorf("the start after the crash did not say it cleaned up: %q", status.String())
	}
	for s, v := range record.Sysctls {
		if want := fmt.Sprintf("sysctl %s = %s\n", s, v); !strings.Contains(node.HostBefore, want) {
			t.Errorf("after the cleanup, %q is not what the killed run recorded (%s)", strings.TrimSpace(want), v)
		}
	}
	for _, p := range []string{localnode.RootDir, localnode.RunDir, localnode.RecordFile} {
		if !strings.Contains(node.HostBefore, "path "+p+" exists=false\n") {
			t.Errorf("after the cleanup, %s is still there", p)
		}
	}
	if err := node.Stop(); err != nil {
		t.Fatalf("stopping the node: %v", err)
	}
	if node.HostBefore != node.HostAfter {
		t.Errorf("the machine is not as before the node:\n%s", diff(node.HostBefore, node.HostAfter))
	}
}

func runPause(ctx context.Context, cp *localkube.Cluster) error {
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	labels := map[string]string{"app": "pause"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pause"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "pause", Image: hackimages.PauseImage,
					SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "pause", metav1.GetOptions{})
		if err == nil && got.Status.AvailableReplicas == 1 {
			return nil
		}
		if time.Now().After(deadline) {
			pods, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			return fmt.Errorf("the Deployment is not available: %+v\npods: %+v", got.Status, pods.Items)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// startRegistry serves a registry on loopback holding the archives of images, for as long as the process runs.
func startRegistry(ctx context.Context, images string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() { _ = srv.Serve(ln) }()
	if _, err := hackimages.PushArchives(ctx, images, ln.Addr().String(), true); err != nil {
		return "", err
	}
	return ln.Addr().String(), nil
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	in := func(s string, l []string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range al {
		if !in(s, bl) {
			out = append(out, "- "+s)
		}
	}
	for _, s := range bl {
		if !in(s, al) {
			out = append(out, "+ "+s)
		}
	}
	return strings.Join(out, "\n")
}
