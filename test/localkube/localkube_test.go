package localkube_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashWithoutStop()
	}
	os.Exit(localkube.RunTests(m, localkube.Options{}, &cp))
}

func clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// eventually polls cond every 100ms until it returns true or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
}

func TestKubeconfigWorks(t *testing.T) {
	kubectl := filepath.Join(mustBinDir(t), "kubectl")
	out, err := exec.Command(kubectl, "--kubeconfig", cp.KubeconfigPath, "get", "namespace", "default", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl with the cluster's kubeconfig failed: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "namespace/default" {
		t.Fatalf("kubectl get namespace default = %q, want namespace/default", got)
	}
}

// The garbage collector of kube-controller-manager deletes a dependent whose only owner is gone.
func TestGarbageCollectionIsReal(t *testing.T) {
	ctx := t.Context()
	cs := clientset(t)
	owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "gc-dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
		}},
	}}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Background deletion: the API server removes the owner at once and leaves the dependent to the collector.
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the garbage collector to delete the orphaned Secret", func() (bool, error) {
		_, err := cs.CoreV1().Secrets("default").Get(ctx, dependent.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// The namespace controller empties and removes a deleted namespace.
func TestNamespaceDeletionCompletes(t *testing.T) {
	ctx := t.Context()
	cs := clientset(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-deletion"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "namespace ns-deletion to be removed", func() (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// A restarted kube-apiserver serves the same data on the same address with the same credentials: the clients made
// before the restart keep working.
func TestRestartAPIServerKeepsAddressCredentialsAndData(t *testing.T) {
	ctx := t.Context()
	cs := clientset(t)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives-restart"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := cp.Config.Host
	if err := cp.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	if cp.Config.Host != host {
		t.Errorf("the API server moved from %s to %s", host, cp.Config.Host)
	}
	eventually(t, 30*time.Second, "the ConfigMap to be served again with its UID", func() (bool, error) {
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.UID == cm.UID, nil
	})
}

// A ServiceAccount token is held to the ServiceAccount's RBAC: what a Role grants works, the rest is forbidden.
func TestServiceAccountTokenIsHeldToRBAC(t *testing.T) {
	ctx := t.Context()
	const ns, sa = "sa-test", "reader"
	saCfg, err := cp.ServiceAccountConfig(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	admin := clientset(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asSA, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	// Granted: listing ConfigMaps in its namespace (RBAC is cached briefly by the authorizer, so poll).
	eventually(t, 10*time.Second, "the ServiceAccount to be allowed to list configmaps", func() (bool, error) {
		_, err := asSA.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	// Refused: writing ConfigMaps, reading Secrets, reading another namespace.
	for name, call := range map[string]func() error{
		"create configmap": func() error {
			_, err := asSA.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nope"}}, metav1.CreateOptions{})
			return err
		},
		"list secrets": func() error {
			_, err := asSA.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		},
		"list configmaps in default": func() error {
			_, err := asSA.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: got %v, want Forbidden", name, err)
		}
	}
	// A kubeconfig file for the ServiceAccount works for another process (kubectl).
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := localkube.WriteKubeconfig(saCfg, path); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(mustBinDir(t), "kubectl"), "--kubeconfig", path, "auth", "can-i", "list", "secrets", "-n", ns).CombinedOutput()
	if got := strings.TrimSpace(string(out)); got != "no" {
		t.Fatalf("kubectl auth can-i list secrets as the ServiceAccount = %q (err %v), want no", got, err)
	}
}

const crashEnv = "ALM_CONTROLPLANE_CRASH_TEST"

// crashWithoutStop runs in a child test process: it starts a cluster, reports its directory and dies without
// calling Stop, as a panicking test would.
func crashWithoutStop() {
	started, err := localkube.Start(localkube.Options{})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(3)
	}
	_ = os.WriteFile(os.Getenv(crashEnv), []byte(started.Dir), 0o600)
	os.Exit(2)
}

// A cluster whose owner dies without Stop is killed by the watchdog: no process is left behind.
func TestNoLeakedProcessesWhenOwnerDies(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "dir")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+marker)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child cluster did not start as expected: %v\n%s", err, out)
	}
	dir, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the watchdog to kill the orphaned cluster and remove "+string(dir), func() (bool, error) {
		_, err := os.Stat(string(dir))
		return len(processesMentioning(string(dir))) == 0 && os.IsNotExist(err), nil
	})
}

func TestStopLeavesNothingRunning(t *testing.T) {
	started, err := localkube.Start(localkube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := started.Dir
	if len(processesMentioning(dir)) < 3 {
		t.Fatalf("expected etcd, kube-apiserver and kube-controller-manager running under %s, found %v", dir, processesMentioning(dir))
	}
	if err := started.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := processesMentioning(dir); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind", dir)
	}
}

// processesMentioning lists the command lines of live processes whose arguments contain s (the watchdog excluded).
func processesMentioning(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(line, s) && !strings.Contains(line, "alm-localkube-watchdog") {
			if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // a zombie is already dead
			}
			found = append(found, line)
		}
	}
	return found
}

func mustBinDir(t *testing.T) string {
	t.Helper()
	dir, err := localkube.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
