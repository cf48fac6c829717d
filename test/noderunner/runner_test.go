package noderunner_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/almproject/alm/test/noderunner/deploystatus"
)

func TestDeploymentRunsWithItsServiceAccountIdentity(t *testing.T) {
	r, ns := startRunner(t)
	ctx := context.Background()
	cs := clientset(t)
	// The ServiceAccount may read ConfigMaps, not Secrets.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "app", Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := deployment(ns, "web", "--listen=:8081", "--name=$(POD_NAME)")
	d.Spec.Template.Spec.ServiceAccountName = "app"
	d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	}
	create(t, d)

	got := waitDeployment(t, ns, "web", time.Minute, "Available=True with 1 ready replica", func(d *appsv1.Deployment) bool {
		return rolledOut(d) && d.Status.ReadyReplicas == 1
	})
	if c := condition(got, appsv1.DeploymentAvailable); c.Reason != deploystatus.ReasonMinimumReplicasAvailable {
		t.Errorf("Available reason = %q, want %q", c.Reason, deploystatus.ReasonMinimumReplicasAvailable)
	}
	pods := podsOf(r, "web")
	if len(pods) != 1 || len(pods[0].Containers) != 1 {
		t.Fatalf("pods = %+v, want one with one container", pods)
	}
	p := pods[0]
	if !strings.HasPrefix(p.Name, "web-"+p.TemplateHash+"-") {
		t.Errorf("pod name %q, want web-<hash>-<random>", p.Name)
	}
	log := readLog(t, p.Containers[0].LogPath)
	env := envOf(log)
	for k, want := range map[string]string{"POD_NAMESPACE": ns, "POD_NAME": p.Name, "POD_IP": "127.0.0.1",
		"KUBECONFIG": p.Kubeconfig, "IMAGE_ENV": "from-image"} {
		if env[k] != want {
			t.Errorf("process env %s = %q, want %q", k, env[k], want)
		}
	}
	if f := env["IMAGE_FILE"]; !strings.HasSuffix(f, "/rootfs/app/testapp") {
		t.Errorf("IMAGE_FILE = %q, want the host path of /app/testapp in the extracted image", f)
	}
	if !strings.Contains(log, "--name="+p.Name) || strings.Contains(log, ":8081\"") {
		t.Errorf("args not expanded or port not mapped: %s", log)
	}
	assertHeldToRBAC(t, p.Kubeconfig, ns)
}

// restartsAtLeast reports whether a condition message says "(restarts: N)" with N >= min. The count keeps growing
// while a container crash-loops, so a test waits for a floor, never for one value it passes through.
func restartsAtLeast(msg string, min int) bool {
	m := restartsRE.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	n, err := strconv.Atoi(m[1])
	return err == nil && n >= min
}

var restartsRE = regexp.MustCompile(`\(restarts: (\d+)\)`)

// assertHeldToRBAC checks that the pod's kubeconfig may list ConfigMaps (granted) and not Secrets.
func assertHeldToRBAC(t *testing.T, kubeconfig, ns string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	podClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := podClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the pod's identity may list ConfigMaps, got %v", err)
	}
	if _, err := podClient.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the pod's identity must not list Secrets, got %v", err)
	}
}

func TestTwoDeploymentsOnTheSameContainerPort(t *testing.T) {
	r, ns := startRunner(t)
	create(t, deployment(ns, "one", "--listen=:8081"))
	create(t, deployment(ns, "two", "--listen=0.0.0.0:8081"))
	for _, name := range []string{"one", "two"} {
		waitDeployment(t, ns, name, time.Minute, name+" Available", rolledOut)
	}
	one, two := podsOf(r, "one"), podsOf(r, "two")
	if len(one) != 1 || len(two) != 1 || one[0].Ports[8081] == two[0].Ports[8081] || one[0].Ports[8081] == 0 {
		t.Errorf("port 8081 must map to different host ports: %v and %v", one, two)
	}
}

func TestCrashingProcessIsCrashLoopBackOff(t *testing.T) {
	r, ns := startRunner(t)
	d := deployment(ns, "crasher", "--exit-code=3")
	d.Spec.Template.Spec.Containers[0].ReadinessProbe = nil
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](3)
	create(t, d)
	got := waitDeployment(t, ns, "crasher", time.Minute, "Available=False CrashLoopBackOff after restarts, progress deadline exceeded", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentAvailable)
		return c.Status == corev1.ConditionFalse && c.Reason == deploystatus.ReasonCrashLoopBackOff &&
			restartsAtLeast(c.Message, 2) &&
			condition(d, appsv1.DeploymentProgressing).Reason == deploystatus.ReasonProgressDeadlineExceeded
	})
	if msg := condition(got, appsv1.DeploymentProgressing).Message; !strings.Contains(msg, "exit code 3") {
		t.Errorf("Progressing message %q does not say why", msg)
	}
	msg := condition(got, appsv1.DeploymentAvailable).Message
	for _, want := range []string{`container "app"`, "exit code 3", "exiting with code 3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Available message %q does not contain %q", msg, want)
		}
	}
	if got.Status.ReadyReplicas != 0 || got.Status.UnavailableReplicas != 1 {
		t.Errorf("status %+v, want 0 ready and 1 unavailable", got.Status)
	}
	if p := podsOf(r, "crasher"); len(p) != 1 || p[0].Containers[0].Restarts < 2 || ptr.Deref(p[0].Containers[0].LastExitCode, 0) != 3 {
		t.Errorf("pods = %+v, want one restarted at least twice with exit code 3", p)
	}
}

func TestTemplateChangeRollsOut(t *testing.T) {
	r, ns := startRunner(t)
	create(t, deployment(ns, "app", "--listen=:8081"))
	waitDeployment(t, ns, "app", time.Minute, "first version available", rolledOut)
	old := podsOf(r, "app")[0]
	oldPID := old.Containers[0].PID

	cs := clientset(t)
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
	if d, err = cs.AppsV1().Deployments(ns).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, ns, "app", time.Minute, "second version rolled out", func(got *appsv1.Deployment) bool {
		return got.Generation == d.Generation && rolledOut(got)
	})
	if alive(oldPID) {
		t.Errorf("the old pod's process %d still runs after the rollout", oldPID)
	}
	pods := podsOf(r, "app")
	if len(pods) != 1 || pods[0].TemplateHash == old.TemplateHash {
		t.Fatalf("pods = %+v, want one of the new template", pods)
	}
	if v := envOf(readLog(t, pods[0].Containers[0].LogPath))["VERSION"]; v != "2" {
		t.Errorf("new process VERSION = %q, want 2", v)
	}
}

func TestScaleToZeroAndDeleteStopProcesses(t *testing.T) {
	r, ns := startRunner(t)
	cs := clientset(t)
	for _, name := range []string{"scaled", "deleted"} {
		create(t, deployment(ns, name, "--listen=:8081"))
		waitDeployment(t, ns, name, time.Minute, name+" available", rolledOut)
	}
	scaledPID, deletedPID := podsOf(r, "scaled")[0].Containers[0].PID, podsOf(r, "deleted")[0].Containers[0].PID

	scale := &autoscalingScale{cs: cs, ns: ns}
	scale.to(t, "scaled", 0)
	waitDeployment(t, ns, "scaled", time.Minute, "scaled to 0", func(d *appsv1.Deployment) bool {
		return rolledOut(d) && d.Status.Replicas == 0
	})
	if alive(scaledPID) {
		t.Errorf("process %d of the Deployment scaled to 0 still runs", scaledPID)
	}

	if err := cs.AppsV1().Deployments(ns).Delete(context.Background(), "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the deleted Deployment's process to end", func() (bool, string) {
		return !alive(deletedPID) && len(podsOf(r, "deleted")) == 0, "still running"
	})
}

func TestUnknownImageIsImageNotFound(t *testing.T) {
	_, ns := startRunner(t)
	d := deployment(ns, "missing")
	d.Spec.Template.Spec.Containers[0].Image = "alm.local/does-not-exist:9.9.9"
	create(t, d)
	got := waitDeployment(t, ns, "missing", time.Minute, "Available=False ImageNotFound", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentAvailable)
		return c.Status == corev1.ConditionFalse && c.Reason == deploystatus.ReasonImageNotFound
	})
	msg := condition(got, appsv1.DeploymentAvailable).Message
	if !strings.Contains(msg, "alm.local/does-not-exist:9.9.9") || !strings.Contains(msg, testImage) {
		t.Errorf("message %q must name the missing image and list %s", msg, testImage)
	}
}

func TestStopLeavesNoProcess(t *testing.T) {
	r, ns := startRunner(t)
	d := deployment(ns, "many", "--listen=:8081")
	d.Spec.Replicas = ptr.To[int32](2)
	create(t, d)
	waitDeployment(t, ns, "many", time.Minute, "2 replicas available", rolledOut)
	var pids []int
	for _, p := range podsOf(r, "many") {
		pids = append(pids, p.Containers[0].PID)
	}
	if len(pids) != 2 {
		t.Fatalf("pids = %v, want 2", pids)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d still runs after Stop", pid)
		}
	}
}

func TestMissingServiceAccountIsCreateContainerErrorUntilCreated(t *testing.T) {
	r, ns := startRunner(t)
	ctx := context.Background()
	cs := clientset(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"MODE": "local"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"token": "s3cret"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := deployment(ns, "ghostly", "--listen=:8081")
	d.Spec.Template.Spec.ServiceAccountName = "ghost"
	c := &d.Spec.Template.Spec.Containers[0]
	c.EnvFrom = []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	c.Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}}}
	create(t, d)
	got := waitDeployment(t, ns, "ghostly", time.Minute, "Available=False CreateContainerError", func(d *appsv1.Deployment) bool {
		return condition(d, appsv1.DeploymentAvailable).Reason == deploystatus.ReasonCreateContainerError
	})
	if msg := condition(got, appsv1.DeploymentAvailable).Message; !strings.Contains(msg, "ghost") {
		t.Errorf("message %q must name the ServiceAccount", msg)
	}

	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ghost"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, ns, "ghostly", time.Minute, "available once the ServiceAccount exists", rolledOut)
	env := envOf(readLog(t, podsOf(r, "ghostly")[0].Containers[0].LogPath))
	if env["CFG_MODE"] != "local" || env["TOKEN"] != "s3cret" {
		t.Errorf("envFrom/secretKeyRef: CFG_MODE=%q TOKEN=%q", env["CFG_MODE"], env["TOKEN"])
	}
}

func TestFailingLivenessProbeRestartsTheContainer(t *testing.T) {
	r, ns := startRunner(t)
	d := deployment(ns, "sick", "--listen=:8081", "--unhealthy")
	d.Spec.Template.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 2,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8081)}}}
	create(t, d)
	got := waitDeployment(t, ns, "sick", time.Minute, "Available=False CrashLoopBackOff after liveness restarts", func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentAvailable)
		return c.Reason == deploystatus.ReasonCrashLoopBackOff && restartsAtLeast(c.Message, 2)
	})
	if msg := condition(got, appsv1.DeploymentAvailable).Message; !strings.Contains(msg, "liveness probe failed") {
		t.Errorf("message %q must say the liveness probe failed", msg)
	}
	if p := podsOf(r, "sick"); len(p) != 1 || p[0].Containers[0].Restarts < 2 {
		t.Errorf("pods = %+v, want one restarted at least twice", p)
	}
}

func TestRecreateStopsTheOldPodFirst(t *testing.T) {
	r, ns := startRunner(t)
	d := deployment(ns, "single", "--listen=:8081")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	create(t, d)
	waitDeployment(t, ns, "single", time.Minute, "first version available", rolledOut)
	oldPID := podsOf(r, "single")[0].Containers[0].PID

	cs := clientset(t)
	cur, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "single", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Template.Spec.Containers[0].Args = []string{"--listen=0.0.0.0:8081"}
	if cur, err = cs.AppsV1().Deployments(ns).Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, ns, "single", time.Minute, "second version rolled out", func(got *appsv1.Deployment) bool {
		return got.Generation == cur.Generation && rolledOut(got)
	})
	if alive(oldPID) {
		t.Errorf("old process %d still runs", oldPID)
	}
	if pods := podsOf(r, "single"); len(pods) != 1 {
		t.Errorf("pods = %+v, want one", pods)
	}
}
