package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localenv"
)

// TestDiagnosisFromRealPods installs three operators that cannot run, each for a reason a real node reports on its
// pods, and checks that each OperatorVersion says which and why in its status (reason and message) and in
// `almctl status`:
// an image that does not exist (the kubelet's ErrImagePull / ImagePullBackOff), a process that exits (CrashLoopBackOff,
// with the exit code and, as its container asks for them with terminationMessagePolicy FallbackToLogsOnError, the
// last log lines), a pod no node can take (kube-scheduler's Unschedulable).
func TestDiagnosisFromRealPods(t *testing.T) {
	ctx, env, story := start(t)
	const catalog = "diagnosis"
	missing := localenv.ImageHost + "/no-such-operator:0.0.1"
	cases := []struct {
		pkg    string
		demo   harness.Demo
		reason string
		says   []string
	}{
		{"diag-pull", harness.Demo{Image: missing}, operatorsv1alpha1.ReasonImagePullFailed,
			[]string{missing, "not found or not pullable"}},
		{"diag-crash", harness.Demo{Image: localenv.ImageHost + "/alm:0.1.0", Args: []string{"--no-such-flag"}, LogsOnError: true},
			operatorsv1alpha1.ReasonCrashLoopBackOff, []string{"exit code 1", "flag provided but not defined: -no-such-flag"}},
		{"diag-sched", harness.Demo{Image: localenv.ImageHost + "/alm:0.1.0", NodeSelector: map[string]string{"alm.dev/no-such-node": "true"}},
			operatorsv1alpha1.ReasonUnschedulable, []string{"cannot be scheduled", "didn't match Pod's node affinity/selector"}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		must(t, story.TrustNamespace(ctx, c.pkg))
		cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: c.pkg, Name: catalog},
			Spec: operatorsv1alpha1.CatalogSourceSpec{ConfigMap: &operatorsv1alpha1.ConfigMapSource{}}}
		must(t, env.Client.Create(ctx, cs))
		d := c.demo
		d.Package, d.Name, d.Version = c.pkg, c.pkg+".v1.0.0", "1.0.0"
		harness.Publish(t, env.Client, harness.WriteBundle(t, filepath.Join(dir, c.pkg), d), catalog, c.pkg)
		must(t, story.DeclareAppType(ctx, c.pkg, c.pkg))
	}
	for _, c := range cases {
		ov := &operatorsv1alpha1.OperatorVersion{}
		err := localenv.Poll(ctx, 3*time.Minute, func() error {
			if err := env.Client.Get(ctx, types.NamespacedName{Namespace: c.pkg, Name: c.pkg + ".v1.0.0"}, ov); err != nil {
				return err
			}
			if ov.Status.Reason != c.reason {
				return fmt.Errorf("OperatorVersion %s/%s is %s %s, want reason %s: %s", c.pkg, ov.Name, ov.Status.Phase, ov.Status.Reason, c.reason, ov.Status.Message)
			}
			for _, want := range c.says {
				if !strings.Contains(ov.Status.Message, want) {
					return fmt.Errorf("OperatorVersion %s/%s: the message does not say %q: %s", c.pkg, ov.Name, want, ov.Status.Message)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
			continue
		}
		t.Logf("%s: %s %s: %s", c.pkg, ov.Status.Phase, ov.Status.Reason, ov.Status.Message)
		out, err := exec.CommandContext(ctx, almctl, "status", "-n", c.pkg, "--kubeconfig", env.Kubeconfig).CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.reason) {
			t.Errorf("almctl status -n %s does not say %s (err %v):\n%s", c.pkg, c.reason, err, out)
		}
	}
}
