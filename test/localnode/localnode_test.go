package localnode_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"os"
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

// TestNode starts a cluster with a real node, runs a Deployment of the sandbox image through the registry mirror,
// and checks that stopping the node leaves the machine as it was.
func TestNode(t *testing.T) {
	before, err := localnode.HostState()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := localkube.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	mirror := startRegistry(t, filepath.Join(bin, "images"))
	ip, err := localnode.HostIP()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(t.TempDir(), "node.log"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := localkube.Start(localkube.Options{Node: &localkube.NodeOptions{IP: ip}, Output: logs})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	ctx := t.Context()
	started := time.Now()
	node, err := localnode.Start(ctx, localnode.Options{
		Cluster: cp, Output: logs, SandboxImage: hackimages.PauseImage,
		Mirrors: map[string]localnode.Mirror{"alm.local": {URL: "http://" + mirror}},
	})
	if err != nil {
		out, _ := os.ReadFile(logs.Name())
		t.Fatalf("%v\n%s", err, tail(string(out), 60))
	}
	t.Logf("node Ready %.1fs after start", time.Since(started).Seconds())
	runPause(ctx, t, cp)
	if err := node.Stop(); err != nil {
		t.Fatalf("stopping the node: %v", err)
	}
	after, err := localnode.HostState()
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("the machine is not as before the node:\n%s", diff(before, after))
	}
}

func runPause(ctx context.Context, t *testing.T, cp *localkube.Cluster) {
	t.Helper()
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
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "pause", metav1.GetOptions{})
		if err == nil && got.Status.AvailableReplicas == 1 {
			return
		}
		if time.Now().After(deadline) {
			pods, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			t.Fatalf("the Deployment is not available: %+v\npods: %+v", got.Status, pods.Items)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func startRegistry(t *testing.T, images string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	if _, err := hackimages.PushArchives(t.Context(), images, ln.Addr().String(), true); err != nil {
		t.Fatal(err)
	}
	return ln.Addr().String()
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
