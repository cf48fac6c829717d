package konnect

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/handoff"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localkube"
)

// kubeAPI is the local Kubernetes API server the integration tests run against (test/localkube), not a Konnect
// control plane.
var kubeAPI *localkube.Cluster

func TestMain(m *testing.M) {
	// Unit tests need no control plane: `go test -short` runs only them.
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	root, err := localkube.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(checkSpecCoverage(localkube.RunTests(m, localkube.Options{
		// ALM's OperatorVersion: the kind the operator answers a hand-over on (handoff_test.go).
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "konnect-operator", "crd"),
			filepath.Join(root, "config", "crd", "bases", "operators.alm.dev_operatorversions.yaml")},
		NoControllerManager: true, // no garbage collection needed: finalizers are the operator's own
	}, &kubeAPI)))
}

// env is one test's world: a namespace, a simulator and an operator watching only that namespace.
type env struct {
	t   testing.TB
	ctx context.Context
	c   client.Client
	sim *konnectsim.Server
	ns  string

	// cfg and opts make the operator; stop ends the running one (nil when it is stopped).
	cfg  *rest.Config
	opts envOptions
	stop func()
	// other is a second namespace the operator watches (envOptions.otherNamespace), "" without one.
	other string
}

type envOptions struct {
	syncPeriod time.Duration
	mode       entity.DriftMode
	sim        konnectsim.Options
	rateLimit  float64
	workers    int
	// partReads is the operator's Options.PartReads (0: its default).
	partReads int
	// intercept wraps the operator's client, e.g. to interleave another write with one of the operator's.
	intercept *interceptor.Funcs
	// tagScheme and handoff are the operator's Options of the same names; leaderElect elects the leader through
	// the Lease konnect-operator in the test's namespace (shared by every operator of the test).
	tagScheme   entity.TagScheme
	handoff     *handoff.Target
	leaderElect bool
	// otherNamespace gives the test a second namespace (env.other) the operator watches too.
	otherNamespace bool
}

var nsSeq atomic.Int64

// testLogger receives the operator's logs when $KONNECT_TEST_LOG names a file.
var testLogger = logr.Discard()

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	if kubeAPI == nil {
		t.Skip("no local control plane (-short)")
	}
	if o.syncPeriod == 0 {
		o.syncPeriod = time.Hour
	}
	if o.mode == "" {
		o.mode = entity.DriftModeList
	}
	if path := os.Getenv("KONNECT_TEST_LOG"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		testLogger = zap.New(zap.WriteTo(f), zap.UseDevMode(true), zap.Level(zapcore.Level(-1)))
	}
	sim := konnectsim.StartTest(t, o.sim) // fails the test on a request or answer Kong's OpenAPI document rejects

	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	// client-go's default of 5 requests/s would make the Kubernetes API, not Konnect, the bottleneck.
	cfg := rest.CopyConfig(kubeAPI.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("konnect-%s-%d", strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(t.Name(), "/", "-"), "_", "-")), nsSeq.Add(1))
	if len(ns) > 63 {
		ns = ns[len(ns)-63:]
		ns = strings.TrimLeft(ns, "-")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, c: c, sim: sim, ns: ns, cfg: cfg, opts: o}
	if o.otherNamespace {
		e.other = strings.TrimRight(ns[:min(len(ns), 61)], "-") + "-x"
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.other}}); err != nil {
			t.Fatal(err)
		}
	}
	e.startOperator()
	t.Cleanup(e.stopOperator)
	return e
}

// startOperator starts the operator (a manager with the loops of Setup) watching only e's namespace.
func (e *env) startOperator() {
	e.t.Helper()
	e.stop = e.runOperator(e.opts)
}

// runOperator starts an operator with options o watching only e's namespace and returns what stops it.
func (e *env) runOperator(o envOptions) func() {
	e.t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		e.t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(e.cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 testLogger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         o.leaderElect, LeaderElectionID: "konnect-operator", LeaderElectionNamespace: e.ns,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cache.Options{DefaultNamespaces: e.namespaces()},
		Controller:                    config.Controller{SkipNameValidation: ptrTo(true)},
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			if o.intercept == nil {
				return client.New(config, options)
			}
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, *o.intercept), nil
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := Setup(ctx, mgr, Options{
		SyncPeriod: o.syncPeriod, DriftMode: o.mode, RateLimit: o.rateLimit, MaxConcurrentReconciles: o.workers,
		TagScheme: o.tagScheme, Handoff: o.handoff, PartReads: o.partReads, CloudGatewayPoll: 100 * time.Millisecond,
	}); err != nil {
		cancel()
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("manager: %v", err)
		}
	}
}

// namespaces are the namespaces the operator watches.
func (e *env) namespaces() map[string]cache.Config {
	ns := map[string]cache.Config{e.ns: {}}
	if e.other != "" {
		ns[e.other] = cache.Config{}
	}
	return ns
}

// stopOperator stops the running operator, if any, and waits until it has stopped.
func (e *env) stopOperator() {
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
}

func ptrTo[T any](v T) *T { return &v }

// eventually polls check every 100ms until it returns nil or timeout passes.
func (e *env) eventually(timeout time.Duration, what string, check func() error) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createSecretAuth creates the Secret secret holding the simulator's token and the auth configuration name that
// reads it.
func (e *env) createSecretAuth(name, secret string) {
	e.t.Helper()
	e.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}, StringData: map[string]string{"token": konnectsim.DefaultToken}})
	e.create(&konnectv1alpha1.KonnectAPIAuthConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{
			Type: konnectv1alpha1.KonnectAPIAuthTypeSecretRef, SecretRef: &corev1.SecretReference{Name: secret}, ServerURL: e.sim.URL(),
		},
	})
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	obj.SetNamespace(e.ns)
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (e *env) get(obj client.Object, name string) error {
	return e.c.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, obj)
}

// condition returns the condition typ of obj (read fresh), or an error.
func (e *env) condition(obj client.Object, name, typ string) (*metav1.Condition, error) {
	if err := e.get(obj, name); err != nil {
		return nil, err
	}
	var conds []metav1.Condition
	switch o := obj.(type) {
	case *konnectv1alpha1.KonnectAPIAuthConfiguration:
		conds = o.Status.Conditions
	case *konnectv1alpha2.KonnectGatewayControlPlane:
		conds = o.Status.Conditions
	case *configurationv1alpha1.KongService:
		conds = o.Status.Conditions
	case *configurationv1alpha1.KongRoute:
		conds = o.Status.Conditions
	case *configurationv1.KongConsumer:
		conds = o.Status.Conditions
	case *configurationv1alpha1.KongPluginBinding:
		conds = o.Status.Conditions
	case *configurationv1beta1.KongConsumerGroup:
		conds = o.Status.Conditions
	default:
		// The kinds of upstreams, TLS material, keys and vaults: read through their unstructured form.
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		list, _, _ := unstructured.NestedSlice(u, "status", "conditions")
		for _, item := range list {
			var c metav1.Condition
			if m, ok := item.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
				conds = append(conds, c)
			}
		}
	}
	c := apimeta.FindStatusCondition(conds, typ)
	if c == nil {
		return nil, fmt.Errorf("%s has no condition %s", name, typ)
	}
	return c, nil
}

// waitCondition waits until obj's condition typ has status (and reason, if not empty).
func (e *env) waitCondition(obj client.Object, name, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *metav1.Condition {
	e.t.Helper()
	var got *metav1.Condition
	e.eventually(timeout, fmt.Sprintf("%T %s %s=%s %s", obj, name, typ, status, reason), func() error {
		c, err := e.condition(obj, name, typ)
		if err != nil {
			return err
		}
		if c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("%s=%s reason %s: %s", typ, c.Status, c.Reason, c.Message)
		}
		got = c
		return nil
	})
	return got
}

func (e *env) waitProgrammed(obj client.Object, name string) {
	e.t.Helper()
	e.waitCondition(obj, name, konnectv1alpha1.ConditionProgrammed, metav1.ConditionTrue, "", 30*time.Second)
}

// ---- object builders ----

func authConfig(name, serverURL string) *konnectv1alpha1.KonnectAPIAuthConfiguration {
	return &konnectv1alpha1.KonnectAPIAuthConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{
			Type: konnectv1alpha1.KonnectAPIAuthTypeToken, Token: konnectsim.DefaultToken, ServerURL: serverURL,
		},
	}
}

func controlPlaneObj(name, auth string) *konnectv1alpha2.KonnectGatewayControlPlane {
	return &konnectv1alpha2.KonnectGatewayControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: konnectv1alpha2.KonnectGatewayControlPlaneSpec{
			CreateControlPlaneRequest: &konnectv1alpha2.CreateControlPlaneRequest{Name: name, Labels: map[string]string{"team": "a"}},
			KonnectConfiguration:      konnectv1alpha1.KonnectConfiguration{APIAuthConfigurationRef: konnectv1alpha1.KonnectAPIAuthConfigurationRef{Name: auth}},
		},
	}
}

func cpRef(name string) *configurationv1alpha1.ControlPlaneRef {
	return &configurationv1alpha1.ControlPlaneRef{
		Type:                 configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
		KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: name},
	}
}

func serviceObj(name, cp, host string) *configurationv1alpha1.KongService {
	return &configurationv1alpha1.KongService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configurationv1alpha1.KongServiceSpec{
			ControlPlaneRef:    cpRef(cp),
			KongServiceAPISpec: configurationv1alpha1.KongServiceAPISpec{Name: ptrTo(name), Host: host, Port: 80, Protocol: "http"},
		},
	}
}

func routeObj(name, service string) *configurationv1alpha1.KongRoute {
	return &configurationv1alpha1.KongRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configurationv1alpha1.KongRouteSpec{
			ServiceRef: &configurationv1alpha1.ServiceRef{
				Type: configurationv1alpha1.ServiceRefNamespacedRef, NamespacedRef: &configurationv1alpha1.NameRef{Name: service},
			},
			KongRouteAPISpec: configurationv1alpha1.KongRouteAPISpec{Name: ptrTo(name), Paths: []string{"/" + name}},
		},
	}
}

// readyControlPlane creates an auth configuration and a control plane and waits until both are usable.
func (e *env) readyControlPlane(name string) *konnectv1alpha2.KonnectGatewayControlPlane {
	e.t.Helper()
	e.create(authConfig(name+"-auth", e.sim.URL()))
	e.create(controlPlaneObj(name, name+"-auth"))
	cpObj := &konnectv1alpha2.KonnectGatewayControlPlane{}
	e.waitProgrammed(cpObj, name)
	return cpObj
}

// simObjects returns the simulator's objects of kind carrying the k8s-namespace tag of this test.
func (e *env) simObjects(kind konnectsim.Kind) []konnectsim.Object {
	var out []konnectsim.Object
	for _, o := range e.sim.ObjectsOf(kind) {
		if kind == konnectsim.KindControlPlane {
			if o.Labels[entity.TagNamespace] == entity.LabelValue(e.ns) {
				out = append(out, o)
			}
			continue
		}
		for _, tag := range o.Tags {
			if tag == entity.TagNamespace+":"+e.ns {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// simByUID returns the simulator's objects carrying the identity of the Kubernetes object uid.
func (e *env) simByUID(kind konnectsim.Kind, uid types.UID) []konnectsim.Object {
	var out []konnectsim.Object
	for _, o := range e.sim.ObjectsOf(kind) {
		if o.Labels[entity.TagUID] == string(uid) {
			out = append(out, o)
			continue
		}
		for _, tag := range o.Tags {
			if tag == entity.TagUID+":"+string(uid) {
				out = append(out, o)
			}
		}
	}
	return out
}

func count(sim *konnectsim.Server, method, path string) int64 { return sim.Count(method + " " + path) }

// mutate reads obj fresh, applies change and updates it, retrying on conflicts (the operator writes too).
func (e *env) mutate(obj client.Object, name string, change func()) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.get(obj, name); err != nil {
			return err
		}
		change()
		return e.c.Update(e.ctx, obj)
	})
	if err != nil {
		e.t.Fatalf("updating %s: %v", name, err)
	}
}
