package noderunner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/noderunner"
	"github.com/almproject/alm/test/noderunner/testimage"

	"github.com/almproject/alm/test/noderunner/deploystatus"
)

// testImage is the reference of the test program's image in the archive the tests build.
const testImage = "alm.local/noderunner-testapp:1.0.0"

var (
	cp        *localkube.Cluster
	imagesDir string
	// testImg is the image of testImage, for tests that push it to a registry.
	testImg v1.Image
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "noderunner-images-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	imagesDir = dir
	if testImg, err = buildTestImage(dir); err != nil {
		fmt.Fprintf(os.Stderr, "building the test image: %v\n", err)
		os.Exit(1)
	}
	code := localkube.RunTests(m, localkube.Options{}, &cp)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildTestImage builds the test program's image (testimage.Build) and writes it as testImage to dir/testapp.tar, as
// `make images` would, and returns it.
func buildTestImage(dir string) (v1.Image, error) {
	root, err := localkube.RepoRoot()
	if err != nil {
		return nil, err
	}
	img, err := testimage.Build(root)
	if err != nil {
		return nil, err
	}
	tag, err := name.NewTag(testImage)
	if err != nil {
		return nil, err
	}
	return img, tarball.MultiRefWriteToFile(filepath.Join(dir, "testapp.tar"), map[name.Reference]v1.Image{tag: img})
}

// startRunner creates a namespace and starts a node runner limited to it, with the test image's archive; the runner
// stops when the test ends.
func startRunner(t *testing.T) (*noderunner.Runner, string) {
	t.Helper()
	return startRunnerWith(t, func(*noderunner.Options) {})
}

// startRunnerWith is startRunner with options changed by configure.
func startRunnerWith(t *testing.T, configure func(*noderunner.Options)) (*noderunner.Runner, string) {
	t.Helper()
	ns := "nr-" + rand.String(6)
	cs := clientset(t)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := noderunner.Options{Config: cp.Config, ImagesDir: imagesDir, StateDir: t.TempDir(),
		Namespaces: []string{ns}, MaxGracePeriod: 3 * time.Second, Logger: testr.New(t)}
	configure(&opts)
	r, err := noderunner.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Errorf("stopping the runner: %v", err)
		}
	})
	return r, ns
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// deployment is a one-replica Deployment of the test image with a probes port 8081 and a readiness probe on it.
func deployment(ns, name string, args ...string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: testImage, Args: args,
					Ports: []corev1.ContainerPort{{Name: "probes", ContainerPort: 8081}},
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("probes")}}},
				}}},
			},
		},
	}
}

func create(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if _, err := clientset(t).AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls check every 200ms until it returns true, failing the test with the last description after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = check(); ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
}

// waitDeployment waits until the Deployment satisfies check and returns it.
func waitDeployment(t *testing.T, ns, name string, timeout time.Duration, what string, check func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	cs := clientset(t)
	var d *appsv1.Deployment
	waitFor(t, timeout, what, func() (bool, string) {
		var err error
		if d, err = cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return check(d), fmt.Sprintf("generation %d, status %+v", d.Generation, d.Status)
	})
	return d
}

// condition returns the Deployment's condition of type t, or an empty one.
func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) appsv1.DeploymentCondition {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return appsv1.DeploymentCondition{}
}

// rolledOut says the Deployment's current generation is fully rolled out and available.
func rolledOut(d *appsv1.Deployment) bool {
	want := ptr.Deref(d.Spec.Replicas, 1)
	return d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == want &&
		d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want &&
		condition(d, appsv1.DeploymentAvailable).Status == corev1.ConditionTrue &&
		condition(d, appsv1.DeploymentProgressing).Reason == deploystatus.ReasonNewReplicaSetAvailable
}

// podsOf returns the runner's pods of a Deployment.
func podsOf(r *noderunner.Runner, deployment string) []noderunner.PodInfo {
	var out []noderunner.PodInfo
	for _, p := range r.Pods() {
		if p.Deployment == deployment {
			out = append(out, p)
		}
	}
	return out
}

// alive says a process with this pid exists.
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// readLog returns a container's log file.
func readLog(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// envOf returns the ENV lines the test program printed.
func envOf(log string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		if kv, ok := strings.CutPrefix(line, "ENV "); ok {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	return env
}

// autoscalingScale changes a Deployment's replicas through the scale subresource, as `kubectl scale` does.
type autoscalingScale struct {
	cs kubernetes.Interface
	ns string
}

func (s *autoscalingScale) to(t *testing.T, name string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	sc, err := s.cs.AppsV1().Deployments(s.ns).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = replicas
	if _, err := s.cs.AppsV1().Deployments(s.ns).UpdateScale(ctx, name, sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
