// Package outage keeps a controller-runtime manager prompt across an outage of the API server (a restart, a control
// plane upgrade, a failover): its caches resume within seconds of the API server answering again, and a reconcile
// that failed while it was away is retried within seconds too. ALM and the Konnect operator use it; it depends on
// nothing of theirs.
//
// Why it is needed: client-go's reflector (v0.35) retries a failed watch and re-lists after backoffs from one
// exponential backoff manager per informer — 0.8s doubling to 30s, plus up to 100% jitter, reset only after two
// minutes without a backoff — and it cannot be configured (ReflectorOptions has no backoff, and controller-runtime
// v0.23's cache.Options offers only NewInformer and a watch error handler, which is called after the backoff is
// taken). A restart of kube-apiserver costs a reflector one backoff per refused connection while the server is away
// and one more before it re-lists after the new server's "410 too old resource version"; restarts a minute apart never
// reset it, so a cache could stay up to a minute behind after each restart, and every loop reading it waited.
//
// NewInformer wraps the informer's lister-watcher instead: while the API server does not answer (connection refused
// or reset, 429 or 503, the server shutting down, and for AuthGrace after that a 401 or 403 of a server whose
// authorizer is still loading) List and Watch retry on their own, every 0.5s doubling to 2s (a
// Retry-After the server sends is honoured), so the reflector never sees those errors and never backs off; and a
// watch that the new server answers with 410 (the resourceVersion is older than its watch cache) is resumed in the
// same stream by listing afresh: what the list no longer holds is delivered as deleted, everything else as modified,
// then a bookmark at the list's resourceVersion, and the watch goes on from there. This is what the reflector's
// re-list does (DeltaFIFO.Replace, against the informer's store), without the wait before it.
package outage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Retry periods while the API server does not answer: the first retry after FirstRetry, each next one twice as late
// up to MaxRetry (with 20% jitter, so that many clients do not come back in step). MaxRetry bounds how long after its
// return a cache resumes; while the server is away each informer tries every MaxRetry, about 0.5 connection attempts
// per second — comparable to the reflector's own 30-60s backoff summed over a manager's dozen informers, and cheap
// (a refused connection). A 429 or 503 with Retry-After waits as long as the server asks.
const (
	FirstRetry = 500 * time.Millisecond
	MaxRetry   = 2 * time.Second
)

// NewInformer is a cache.Options.NewInformer: client-go's shared index informer over a lister-watcher that rides
// out API server outages (see the package comment).
func NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	rw := &listerWatcher{inner: toolscache.ToListerWatcherWithContext(lw), example: obj, orig: lw,
		log: ctrl.Log.WithName("informer").WithValues("type", typeName(obj))}
	inf := toolscache.NewSharedIndexInformer(rw, obj, resync, indexers)
	rw.known = inf.GetStore()
	return inf
}

// listerWatcher is the informer's lister-watcher with the outage handling.
type listerWatcher struct {
	inner   toolscache.ListerWatcherWithContext
	orig    toolscache.ListerWatcher
	example runtime.Object
	// known is the informer's store: what the informer holds, to tell what a fresh list no longer has.
	known toolscache.Store
	log   logr.Logger
	// lastAway is when the API server was last seen away (Unix nanoseconds; 0: never), see warmingUp.
	lastAway atomic.Int64
}

var _ toolscache.ListerWatcherWithContext = &listerWatcher{}

// IsWatchListSemanticsUnSupported passes on what the wrapped lister-watcher says about WatchList (client-go's
// watchlist.DoesClientNotSupportWatchListSemantics asks it).
func (l *listerWatcher) IsWatchListSemanticsUnSupported() bool {
	u, ok := l.orig.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}

func (l *listerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *listerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists, retrying while the API server does not answer.
func (l *listerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	var out runtime.Object
	err := l.retry(ctx, "list", func() (err error) {
		out, err = l.inner.ListWithContext(ctx, opts)
		return err
	})
	return out, err
}

// WatchWithContext watches, retrying while the API server does not answer; a plain watch (not WatchList's initial
// events) that the server answers with 410 is resumed by listing afresh (resume).
func (l *listerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.watch(ctx, opts)
	if opts.SendInitialEvents != nil {
		return w, err // WatchList: the reflector lists through it; a 410 there is its own to handle
	}
	if err != nil && !isExpired(err) {
		return nil, err
	}
	s := &stream{ch: make(chan watch.Event), stop: make(chan struct{})}
	go l.resume(ctx, opts, w, s)
	return s, nil
}

func (l *listerWatcher) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var w watch.Interface
	err := l.retry(ctx, "watch", func() (err error) {
		w, err = l.inner.WatchWithContext(ctx, opts)
		return err
	})
	return w, err
}

// retry calls f until it succeeds, fails for a reason other than the API server's absence, or ctx ends.
func (l *listerWatcher) retry(ctx context.Context, what string, f func() error) error {
	var since time.Time
	delay := FirstRetry
	for {
		err := f()
		asked, away := unavailable(err)
		if away {
			l.lastAway.Store(time.Now().UnixNano())
		} else if l.warmingUp(err) {
			away = true
		}
		if !away {
			if !since.IsZero() && err == nil {
				l.log.V(1).Info("API server answers again: resuming", "request", what, "after", time.Since(since).Round(time.Millisecond))
			}
			return err
		}
		if since.IsZero() {
			since = time.Now()
			l.log.Info("API server unavailable: retrying", "request", what, "every", MaxRetry, "err", err.Error())
		}
		t := time.NewTimer(max(asked, jitter(delay)))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, MaxRetry)
	}
}

// AuthGrace is how long after the API server was last seen away a 401 or 403 counts as part of the outage: a
// kube-apiserver that has just started answers before its authenticators and RBAC authorizer have loaded what they
// check against, and refuses for a moment what it allows a second later (seen after each restart in the chaos
// scenarios: every informer of ALM's ServiceAccount refused once). Handed to the reflector, each refusal would cost a
// step of its backoff. Later, a refusal is a real one and goes to the reflector (and its log) at once.
const AuthGrace = 30 * time.Second

// warmingUp says whether err is a refusal of a request by an API server that was away a moment ago.
func (l *listerWatcher) warmingUp(err error) bool {
	if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		return false
	}
	last := l.lastAway.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < AuthGrace
}

func jitter(d time.Duration) time.Duration { return wait.Jitter(d, 0.2) }

// unavailable says whether err means the API server is away or overloaded (so retrying soon is right), and how long
// it asked to wait.
func unavailable(err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	if s, ok := apierrors.SuggestsClientDelay(err); ok && (apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)) {
		return min(time.Duration(s)*time.Second, 10*time.Second), true
	}
	switch {
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err):
		return 0, true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return 0, true
	}
	return 0, false
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// stream is the watch the reflector reads: the API server's watches, one after the other, and between them the
// events of a fresh list.
type stream struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (s *stream) Stop()                          { s.once.Do(func() { close(s.stop) }) }
func (s *stream) ResultChan() <-chan watch.Event { return s.ch }

// send delivers ev unless the reflector stopped the stream.
func (s *stream) send(ev watch.Event) bool {
	select {
	case s.ch <- ev:
		return true
	case <-s.stop:
		return false
	}
}

// resume forwards w's events into s; when the server says 410 (or w is nil because the watch was refused with it),
// it lists afresh into s and watches on from the list's resourceVersion. s ends when a watch ends otherwise (the
// reflector starts the next one) or the reflector stops it.
func (l *listerWatcher) resume(ctx context.Context, opts metav1.ListOptions, w watch.Interface, s *stream) {
	defer close(s.ch)
	for {
		if w != nil {
			expired, ok := forward(w, s)
			w.Stop()
			if !expired || !ok {
				return
			}
		}
		rv, err := l.relist(ctx, s)
		if err != nil {
			if !errors.Is(err, errStopped) {
				s.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
			}
			return
		}
		opts.ResourceVersion = rv
		if w, err = l.watch(ctx, opts); err != nil && !isExpired(err) {
			s.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
			return
		}
	}
}

// forward passes w's events on to s until w ends (expired false), w reports 410 (expired true, not passed on) or s
// is stopped (ok false).
func forward(w watch.Interface, s *stream) (expired, ok bool) {
	for {
		select {
		case <-s.stop:
			return false, false
		case ev, open := <-w.ResultChan():
			if !open {
				return false, true
			}
			if ev.Type == watch.Error && isExpired(apierrors.FromObject(ev.Object)) {
				return true, true
			}
			if !s.send(ev) {
				return false, false
			}
		}
	}
}

var errStopped = errors.New("stream stopped")

// relist lists afresh and sends, into s, a delete for each object the informer holds that the list does not, a
// modification for each listed object and a bookmark at the list's resourceVersion. It returns that resourceVersion.
func (l *listerWatcher) relist(ctx context.Context, s *stream) (string, error) {
	start := time.Now()
	list, err := l.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return "", err
	}
	listed := make(map[string]bool, len(items))
	for _, item := range items {
		if key, err := toolscache.MetaNamespaceKeyFunc(item); err == nil {
			listed[key] = true
		}
	}
	deleted := 0
	for _, obj := range l.known.List() {
		key, err := toolscache.MetaNamespaceKeyFunc(obj)
		if err != nil || listed[key] {
			continue
		}
		if o, ok := obj.(runtime.Object); ok {
			if !s.send(watch.Event{Type: watch.Deleted, Object: o}) {
				return "", errStopped
			}
			deleted++
		}
	}
	for _, item := range items {
		if !s.send(watch.Event{Type: watch.Modified, Object: item}) {
			return "", errStopped
		}
	}
	lm, err := apimeta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	rv := lm.GetResourceVersion()
	bookmark := l.example.DeepCopyObject()
	if m, err := apimeta.Accessor(bookmark); err == nil {
		m.SetResourceVersion(rv)
	}
	if !s.send(watch.Event{Type: watch.Bookmark, Object: bookmark}) {
		return "", errStopped
	}
	l.log.Info("Watch resumed from a fresh list (the API server no longer had our resourceVersion)",
		"objects", len(items), "deleted", deleted, "resourceVersion", rv, "took", time.Since(start).Round(time.Millisecond))
	return rv, nil
}

func typeName(obj runtime.Object) string {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
