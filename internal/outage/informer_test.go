package outage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// fakeLW answers from scripted results: refused connections first, then its watches in order, and lists of
// the ConfigMaps in objects.
type fakeLW struct {
	refuse int // how many calls (list or watch) are refused before one is answered
	// then are the errors of the calls after the refused ones, before one is answered.
	then    []error
	watches []*watch.FakeWatcher
	objects []corev1.ConfigMap
	listRV  string
	calls   []string
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func (f *fakeLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	f.calls = append(f.calls, "list rv="+opts.ResourceVersion)
	if err := f.fail(); err != nil {
		return nil, err
	}
	return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: f.listRV}, Items: f.objects}, nil
}

func (f *fakeLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	f.calls = append(f.calls, "watch rv="+opts.ResourceVersion)
	if err := f.fail(); err != nil {
		return nil, err
	}
	if len(f.watches) == 0 {
		return nil, errors.New("no more watches")
	}
	w := f.watches[0]
	f.watches = f.watches[1:]
	return w, nil
}

func (f *fakeLW) fail() error {
	if f.refuse > 0 {
		f.refuse--
		return errRefused
	}
	if len(f.then) > 0 {
		err := f.then[0]
		f.then = f.then[1:]
		return err
	}
	return nil
}

func (f *fakeLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), opts)
}

func (f *fakeLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), opts)
}

func cm(name, rv string) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func newLW(f *fakeLW, known ...corev1.ConfigMap) *listerWatcher {
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	for i := range known {
		_ = store.Add(&known[i])
	}
	return &listerWatcher{inner: f, orig: f, example: &corev1.ConfigMap{}, known: store, log: logr.Discard()}
}

// A refused connection is retried by the lister-watcher itself, not handed to the reflector (whose backoff would
// grow with each one).
func TestRetriesWhileRefused(t *testing.T) {
	f := &fakeLW{refuse: 3, listRV: "7"}
	l := newLW(f)
	start := time.Now()
	if _, err := l.ListWithContext(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(f.calls) != 4 {
		t.Errorf("calls %v, want 3 refused and 1 answered", f.calls)
	}
	// 0.5s, 1s, 2s, each with up to 20% jitter.
	if took := time.Since(start); took < 2800*time.Millisecond || took > 5*time.Second {
		t.Errorf("three retries took %s, want about 3.5s", took)
	}
}

// A refusal (401, 403) right after the API server was away is the new server's authorizer still loading: retried.
// Without an outage before it, it goes to the reflector at once.
func TestForbiddenRightAfterAnOutage(t *testing.T) {
	forbidden := apierrors.NewForbidden(corev1.Resource("configmaps"), "", errors.New("RBAC: clusterrole not found"))
	f := &fakeLW{refuse: 1, then: []error{forbidden, apierrors.NewUnauthorized("token not checked yet")}, listRV: "7"}
	if _, err := newLW(f).ListWithContext(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v (calls %v)", err, f.calls)
	}
	if len(f.calls) != 4 {
		t.Errorf("calls %v, want refused, forbidden, unauthorized, answered", f.calls)
	}
	f = &fakeLW{then: []error{forbidden}}
	if _, err := newLW(f).ListWithContext(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("err %v without an outage before it, want the 403", err)
	}
}

// Any other error goes to the reflector at once, and a cancelled context ends the retries.
func TestOtherErrorsAndCancel(t *testing.T) {
	l := newLW(&fakeLW{})
	if _, err := l.WatchWithContext(t.Context(), metav1.ListOptions{SendInitialEvents: new(bool)}); err == nil || err.Error() != "no more watches" {
		t.Errorf("err %v, want the lister-watcher's own", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := newLW(&fakeLW{refuse: 100}).ListWithContext(ctx, metav1.ListOptions{}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("err %v after the context ended, want the refused connection", err)
	}
}

// A watch the new API server answers with 410 is resumed in the same stream: the objects gone since are deleted,
// the others modified, a bookmark carries the list's resourceVersion, and the watch goes on from it.
func TestResumesAfterExpired(t *testing.T) {
	first, second := watch.NewFake(), watch.NewFake()
	f := &fakeLW{watches: []*watch.FakeWatcher{first, second}, objects: []corev1.ConfigMap{cm("kept", "20"), cm("new", "21")}, listRV: "30"}
	l := newLW(f, cm("kept", "5"), cm("gone", "6"))
	w, err := l.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "6"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		first.Modify(ptr(cm("kept", "8")))
		first.Error(&apierrors.NewResourceExpired("too old resource version: 8 (25)").ErrStatus)
		second.Add(ptr(cm("later", "31")))
	}()
	var got []string
	for range 6 {
		select {
		case ev := <-w.ResultChan():
			m := ev.Object.(*corev1.ConfigMap)
			got = append(got, fmt.Sprintf("%s %s@%s", ev.Type, m.Name, m.ResourceVersion))
		case <-time.After(5 * time.Second):
			t.Fatalf("events so far %v; timed out", got)
		}
	}
	want := []string{"MODIFIED kept@8", "DELETED gone@6", "MODIFIED kept@20", "MODIFIED new@21", "BOOKMARK @30", "ADDED later@31"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n %v\nwant\n %v", got, want)
	}
	if fmt.Sprint(f.calls) != fmt.Sprint([]string{"watch rv=6", "list rv=", "watch rv=30"}) {
		t.Errorf("calls %v", f.calls)
	}
}

func ptr(c corev1.ConfigMap) *corev1.ConfigMap { return &c }
