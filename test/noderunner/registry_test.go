package noderunner_test

import (
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/almproject/alm/test/noderunner"
	"github.com/almproject/alm/test/noderunner/deploystatus"
)

// startMirror serves a registry on loopback (plain HTTP) until the test ends and returns its host:port.
func startMirror(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// push pushes the test image to the registry at host as repo:tag.
func push(t *testing.T, host, repoTag string) {
	t.Helper()
	ref, err := name.ParseReference(host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, testImg, remote.WithContext(t.Context())); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}

// startMirroredRunner starts a runner without image archives whose images of alm.local come from a mirror.
func startMirroredRunner(t *testing.T, mirror string) (*noderunner.Runner, string, string) {
	t.Helper()
	state := t.TempDir()
	r, ns := startRunnerWith(t, func(o *noderunner.Options) {
		o.ImagesDir, o.StateDir = "", state
		o.RegistryMirrors = map[string]string{"alm.local": mirror}
	})
	return r, ns, state
}

func TestImagesArePulledFromTheRegistryMirror(t *testing.T) {
	mirror := startMirror(t)
	push(t, mirror, strings.TrimPrefix(testImage, "alm.local/"))
	r, ns, state := startMirroredRunner(t, mirror)
	for _, n := range []string{"first", "second"} {
		create(t, deployment(ns, n, "--listen=:8081"))
	}
	for _, n := range []string{"first", "second"} {
		waitDeployment(t, ns, n, time.Minute, n+" rolled out", rolledOut)
		if pods := podsOf(r, n); len(pods) != 1 || len(pods[0].Containers) != 1 || pods[0].Containers[0].PID == 0 {
			t.Errorf("%s: want one pod with a running container, got %+v", n, pods)
		}
	}
	extracted, err := filepath.Glob(filepath.Join(state, "images", "*", "rootfs"))
	if err != nil || len(extracted) != 1 {
		t.Errorf("the image must be extracted once (one digest), got %v (%v)", extracted, err)
	}
	if !slices.Contains(r.Images(), testImage) {
		t.Errorf("Images() = %v, want it to list the pulled %s", r.Images(), testImage)
	}
}

func TestImageTheMirrorDoesNotHaveIsImageNotFoundUntilPushed(t *testing.T) {
	mirror := startMirror(t)
	push(t, mirror, "noderunner-testapp:1.0.0") // the repository exists, the tag does not
	_, ns, _ := startMirroredRunner(t, mirror)
	const ref = "alm.local/noderunner-testapp:9.9.9"
	d := deployment(ns, "later", "--listen=:8081")
	d.Spec.Template.Spec.Containers[0].Image = ref
	create(t, d)
	got := waitDeployment(t, ns, "later", time.Minute, "Available=False ImageNotFound", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentAvailable)
		return c.Status == corev1.ConditionFalse && c.Reason == deploystatus.ReasonImageNotFound
	})
	msg := condition(got, appsv1.DeploymentAvailable).Message
	if !strings.Contains(msg, ref) || !strings.Contains(msg, mirror+"/noderunner-testapp:9.9.9") || !strings.Contains(msg, "MANIFEST_UNKNOWN") {
		t.Errorf("message %q must name %s, where it was pulled from and the registry's answer", msg, ref)
	}
	// A kubelet retries a failed pull: once the image is pushed, the Deployment runs.
	push(t, mirror, "noderunner-testapp:9.9.9")
	waitDeployment(t, ns, "later", time.Minute, "rolled out once the image is pushed", rolledOut)
}
