package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/noderunner"
)

// TestInstallingSaysWhyAtOnce: a version whose Deployment names an image the node has not got (the local node
// runner plays the kubelet: it has no images at all here, and writes the Deployment's status as the deployment
// controller does) is Installing with Ready=False ImagePullFailed naming the image within seconds, long before the
// install timeout or the progress deadline would tell, instead of only "0 of 1 replicas updated".
func TestInstallingSaysWhyAtOnce(t *testing.T) {
	c := harness.Client(t, cp)
	ns := harness.Namespace(t, c, "saywhy")
	runner, err := noderunner.New(noderunner.Options{Config: cp.Config, ImagesDir: t.TempDir(), StateDir: t.TempDir(),
		Namespaces: []string{ns}, Logger: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runner.Stop() })
	startALM(t, "all", func(o *loops.Options) { o.InstallTimeout = 10 * time.Minute })
	catalogSource(t, c, ns, "ops")
	harness.Publish(t, c, harness.WriteBundle(t, t.TempDir(), harness.Demo{Package: "etcd", Name: "etcd.v0.9.4", Version: "0.9.4"}), "ops", ns)
	start := time.Now()
	appType(t, c, ns, "etcd")
	ov := &operatorsv1alpha1.OperatorVersion{}
	var ready *metav1.Condition
	harness.Eventually(t, 20*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "etcd.v0.9.4"}, ov); err != nil {
			return err
		}
		ready = apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if ov.Status.Phase != operatorsv1alpha1.PhaseInstalling || ready == nil || ready.Reason != operatorsv1alpha1.ReasonImagePullFailed ||
			!strings.Contains(ready.Message, "alm.local/etcd:0.9.4") || !strings.Contains(ready.Message, "Deployment etcd-operator") {
			return fmt.Errorf("phase %s, Ready %+v; want Installing, ImagePullFailed naming the Deployment and image alm.local/etcd:0.9.4", ov.Status.Phase, ready)
		}
		return nil
	})
	t.Logf("AppType created -> Ready says why after %s: %s: %s", time.Since(start).Round(time.Millisecond), ready.Reason, ready.Message)
	if !strings.Contains(ov.Status.Message, "image") || ov.Status.Reason != operatorsv1alpha1.ReasonImagePullFailed {
		t.Errorf("status reason %s message %q, want the image problem there too", ov.Status.Reason, ov.Status.Message)
	}
}
