// Package harness helps integration tests of ALM's loops: it runs a controller-runtime manager with a chosen set of
// loops against the local control plane, waits for conditions with bounded polls, and plays the kubelet's part for
// Deployments (there is no kubelet on the local control plane).
package harness

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localkube"
)

// Scheme has the kinds ALM's loops use.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorsv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Client is a direct (uncached) client for test assertions.
func Client(t testing.TB, cp *localkube.Cluster) client.Client {
	t.Helper()
	c, err := client.New(cp.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Manager is a running manager; Stop ends it (a "kill" in restart tests).
type Manager struct {
	ctrl.Manager
	cancel context.CancelFunc
	done   chan struct{}
}

// Stop stops the manager and waits for it; it may be called any number of times, from any goroutine.
func (m *Manager) Stop() {
	m.cancel()
	<-m.done
}

// Option changes the manager's options.
type Option func(*ctrl.Options)

// WithInterceptor wraps the manager's client with interceptor functions, e.g. to stop the manager in the middle
// of a step, as a crash would.
func WithInterceptor(funcs interceptor.Funcs) Option {
	return func(o *ctrl.Options) {
		o.NewClient = func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, funcs), nil
		}
	}
}

// StartManager starts a manager with the loops that setup registers; it is stopped when the test ends.
func StartManager(t testing.TB, cp *localkube.Cluster, setup func(ctrl.Manager) error, opts ...Option) *Manager {
	t.Helper()
	return StartManagerAs(t, cp.Config, setup, opts...)
}

// StartManagerAs is StartManager acting with identity cfg (for example ALM's ServiceAccount, so that the manager can
// do exactly what its RBAC grants).
func StartManagerAs(t testing.TB, identity *rest.Config, setup func(ctrl.Manager) error, opts ...Option) *Manager {
	t.Helper()
	options := ctrl.Options{
		Scheme: Scheme(),
		// Not testr: the manager's stop procedure logs after the test has returned, which testing forbids.
		Logger:                 managerLogger(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Restart tests run several managers with the same loops in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, o := range opts {
		o(&options)
	}
	cfg := rest.CopyConfig(identity)
	cfg.QPS, cfg.Burst = 100, 200 // as cmd/alm's defaults; client-go's own (5/10) would throttle the loops
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Manager: mgr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager stopped with an error: %v", err)
		}
	}()
	t.Cleanup(m.Stop)
	return m
}

// Eventually polls cond every 100ms until it returns nil or timeout passes, then fails the test with the last
// error, which should say what was expected and what was seen.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Namespace creates a fresh namespace for one test, named prefix-<random>, so that a test can run several times
// against one control plane (go test -count=N). The test acts as a cluster admin, and trusts the namespace for
// installs with ALM's own permissions (label operators.alm.dev/trusted-installs), as an admin does for the namespaces
// it installs operators in; TenantNamespace is one it does not trust.
func Namespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	return createNamespace(t, c, prefix, map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "true"})
}

// TenantNamespace creates a fresh namespace, named prefix-<random>, that a cluster admin has not trusted: an
// AppType there installs only through a ServiceAccount it names (spec.serviceAccountName).
func TenantNamespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	return createNamespace(t, c, prefix, nil)
}

func createNamespace(t testing.TB, c client.Client, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// EnsureNamespace creates the namespace name unless it exists, for tests that need an exact name (e.g. ALM's own).
func EnsureNamespace(t testing.TB, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// MarkDeploymentAvailable does what the deployment controller and a kubelet would once the Deployment's pods are
// running: it reports the current spec as rolled out and Available.
func MarkDeploymentAvailable(ctx context.Context, c client.Client, namespace, name string) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
		return err
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	return c.Status().Update(ctx, d)
}

// MarkDeploymentFailed does what the deployment controller does when a Deployment's pods never become available
// within its progress deadline (e.g. they crash): Progressing=False, reason ProgressDeadlineExceeded, for the
// current spec. A real deadline passes progressDeadlineSeconds after the spec was applied, never in the same second
// (condition times have seconds only, and ALM reads a deadline from the second of the apply as an earlier spec's), so
// the condition is stamped after the next second boundary.
func MarkDeploymentFailed(ctx context.Context, c client.Client, namespace, name, message string) error {
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(start.Truncate(time.Second).Add(time.Second).Sub(start)):
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
		return err
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: message, LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet has timed out progressing", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	return c.Status().Update(ctx, d)
}

// WaitDeploymentImage waits until the Deployment's first container runs image (e.g. an upgrade updated it).
func WaitDeploymentImage(t testing.TB, c client.Client, namespace, name, image string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("the Deployment %s/%s runs %s, want %s", namespace, name, got, image)
		}
		return nil
	})
}

// WaitDeploymentAndMarkAvailable waits for the Deployment to exist and marks it Available.
func WaitDeploymentAndMarkAvailable(t testing.TB, c client.Client, namespace, name string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		err := MarkDeploymentAvailable(context.Background(), c, namespace, name)
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("deployment %s/%s not created yet", namespace, name)
		}
		return err
	})
}

// WaitPhase waits for the OperatorVersion to reach phase and returns it.
func WaitPhase(t testing.TB, c client.Client, namespace, name string, phase operatorsv1alpha1.OperatorVersionPhase, timeout time.Duration) *operatorsv1alpha1.OperatorVersion {
	t.Helper()
	ov := &operatorsv1alpha1.OperatorVersion{}
	Eventually(t, timeout, func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, ov); err != nil {
			return err
		}
		if ov.Status.Phase != phase {
			return fmt.Errorf("OperatorVersion %s/%s is %q (%s: %s), want %q", namespace, name, ov.Status.Phase, ov.Status.Reason, ov.Status.Message, phase)
		}
		return nil
	})
	return ov
}

// WaitGone waits until obj no longer exists.
func WaitGone(t testing.TB, c client.Client, obj client.Object, timeout time.Duration) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	Eventually(t, timeout, func() error {
		err := c.Get(context.Background(), key, obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%T %s still exists", obj, key)
	})
}

// RunKubelet plays the deployment controller and the kubelet for the whole test: every Deployment whose spec has
// not been rolled out yet is marked rolled out and Available, unless unhealthy says its pods would not start.
func RunKubelet(t testing.TB, c client.Client, unhealthy func(*appsv1.Deployment) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list := &appsv1.DeploymentList{}
			if err := c.List(ctx, list); err == nil {
				for i := range list.Items {
					d := &list.Items[i]
					if d.Status.ObservedGeneration >= d.Generation || (unhealthy != nil && unhealthy(d)) {
						continue
					}
					_ = MarkDeploymentAvailable(ctx, c, d.Namespace, d.Name)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
}

// managerLogger writes the loops' logs to stderr under `go test -v`, and nowhere otherwise.
func managerLogger() logr.Logger {
	if !testing.Verbose() {
		return logr.Discard()
	}
	return zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
}
