package gc_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	}, &cp))
}

// nothing is a cache that has not seen anything yet: every list is empty.
type nothing struct{}

func (nothing) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (nothing) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// listing records the kinds listed through it.
type listing struct {
	client.Reader
	mu    sync.Mutex
	kinds map[string]int
}

func (l *listing) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l.mu.Lock()
	l.kinds[list.GetObjectKind().GroupVersionKind().Kind]++
	l.mu.Unlock()
	return l.Reader.List(ctx, list, opts...)
}

// A replaced version is collected only once the API server says it owns nothing: not while its cache has not seen
// an object it owns yet, nor while its inventory misses the object (an install step applied it and stopped before
// its status write). The API server is asked only about the kinds the version's plan installs, not about every kind
// ALM installs.
func TestCollectsOnlyWhenTheAPIServerSaysItOwnsNothing(t *testing.T) {
	c := harness.Client(t, cp)
	ctx := t.Context()
	// The ConfigMap v1's bundle ships, labelled as v1's; v1's inventory is empty.
	v1, cm := replacedVersion(t, c, false)

	live := &listing{Reader: c, kinds: map[string]int{}}
	r := &gc.Reconciler{Client: c, Objects: nothing{}, Reader: live, Recorder: events.NewFakeRecorder(10)}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(v1)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, v1); err != nil || !v1.DeletionTimestamp.IsZero() {
		t.Fatalf("v1 was collected while it owns ConfigMap %s/%s (get: %v, deletionTimestamp %v)", cm.Namespace, cm.Name, err, v1.DeletionTimestamp)
	}
	if live.kinds["ConfigMapList"] == 0 {
		t.Errorf("the API server was not asked about ConfigMaps, a kind v1 installs; lists by kind: %v", live.kinds)
	}
	// The Demo bundle ships none of these: asking about them is a request per collection for nothing.
	for _, kind := range []string{"SecretList", "PodDisruptionBudgetList", "PriorityClassList", "ValidatingWebhookConfigurationList", "MutatingWebhookConfigurationList"} {
		if live.kinds[kind] > 0 {
			t.Errorf("the API server was asked about %s, a kind v1 cannot own; lists by kind: %v", kind, live.kinds)
		}
	}

	// Once the ConfigMap is gone, v1 owns nothing and is collected.
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, v1); !apierrors.IsNotFound(err) && v1.DeletionTimestamp.IsZero() {
		t.Fatalf("v1 owns nothing and v2 has Succeeded, but v1 was not collected (get: %v)", err)
	}
}

// A version the Upgrade loop handed over and marked Replacing is collected on what the cache of ALM's objects
// says, without asking the API server again; while that cache still shows an object it owns, it is kept.
func TestHandedOverVersionIsCollectedFromTheCache(t *testing.T) {
	c := harness.Client(t, cp)
	ctx := t.Context()
	v1, cm := replacedVersion(t, c, true)

	// The "cache" is the API server itself here: always current.
	live := &listing{Reader: c, kinds: map[string]int{}}
	r := &gc.Reconciler{Client: c, Objects: c, Reader: live, Recorder: events.NewFakeRecorder(10)}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(v1)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, v1); err != nil || !v1.DeletionTimestamp.IsZero() {
		t.Fatalf("v1 was collected while the cache shows it owns ConfigMap %s/%s (get: %v, deletionTimestamp %v)", cm.Namespace, cm.Name, err, v1.DeletionTimestamp)
	}
	if err := c.Delete(ctx, cm); err != nil { // the hand-over removed it: v2 does not ship it
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, v1); !apierrors.IsNotFound(err) && v1.DeletionTimestamp.IsZero() {
		t.Fatalf("v1 was handed over to v2, which has Succeeded, and owns nothing, but it was not collected (get: %v)", err)
	}
	if len(live.kinds) > 0 {
		t.Errorf("the API server was asked what v1 owns although the Upgrade loop handed it over; lists by kind: %v", live.kinds)
	}
}

// replacedVersion creates, in a namespace of its own, demo 1.0.0 and 2.0.0 replacing it, Succeeded, and a ConfigMap
// labelled as 1.0.0's. handedOver: 1.0.0 is marked Replacing for 2.0.0, as the Upgrade loop marks it.
func replacedVersion(t *testing.T, c client.Client, handedOver bool) (*operatorsv1alpha1.OperatorVersion, *corev1.ConfigMap) {
	t.Helper()
	ctx := t.Context()
	ns := harness.Namespace(t, c, "gc")
	v1 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v1.0.0", Version: "1.0.0"}.OperatorVersion()
	v2 := harness.Demo{Namespace: ns, Package: ns, Name: "demo.v2.0.0", Version: "2.0.0", Replaces: v1.Name}.OperatorVersion()
	for _, ov := range []*operatorsv1alpha1.OperatorVersion{v1, v2} {
		if err := c.Create(ctx, ov); err != nil {
			t.Fatal(err)
		}
	}
	v2.Status.Phase = operatorsv1alpha1.PhaseSucceeded
	if err := c.Status().Update(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if handedOver {
		v1.Status.Phase, v1.Status.ReplacedBy = operatorsv1alpha1.PhaseReplacing, v2.Name
		if err := c.Status().Update(ctx, v1); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ns + "-config"}}
	ownership.Claim(cm, v1)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	return v1, cm
}
