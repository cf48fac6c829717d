// Package eventrec writes a manager's Events (events.k8s.io/v1) with memory bounded by what is still to be written.
// client-go's events broadcaster, which controller-runtime's GetEventRecorder uses, keeps a full copy of every Event
// for six to twelve minutes (to count repeats into a series) and starts two goroutines per Event; at a thousand
// upgrades that was about 5 MB of ALM's heap at its peak, and at ten thousand installs several times that. A
// Broadcaster keeps, per Event written in the last six minutes, only a hash of what makes it a repeat (client-go's
// key: type, action, reason, reporting controller and instance, regarding and related object) and the Event's name,
// and writes from a bounded queue with a few workers.
//
// The Events are the ones client-go's recorder makes (same name, fields and series), so `kubectl events` and
// anything reading them see no difference: the first occurrence is created, the second patches series.count to 2,
// and further repeats are counted in memory and written at most once a minute per Event. When the queue is full an
// Event is dropped, counted in alm_events_dropped_total, rather than held.
package eventrec

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Defaults of Options.
const (
	DefaultQueue   = 1000 // as client-go's broadcaster: at most this many Events wait to be written
	DefaultWorkers = 4
	// seriesWindow is how long an Event is remembered to count its repeats (client-go's finishTime).
	seriesWindow = 6 * time.Minute
	// seriesFlush is how often at most a series' new count is written.
	seriesFlush = time.Minute
	// maxRemembered bounds the Events remembered for series; beyond it a new Event is written but not remembered.
	maxRemembered = 10000
	// noteLimit is the API server's limit on an Event's note.
	noteLimit = 1024
)

var dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "alm_events_dropped_total",
	Help: "Events ALM did not write, by reason: queue (more Events waiting than the queue holds), invalid (the API server refused it), unreachable (the API server did not answer after retries).",
}, []string{"reason"})

func init() { metrics.Registry.MustRegister(dropped) }

// Options configure a Broadcaster.
type Options struct {
	Scheme *runtime.Scheme // to name the kind of the objects Events are about
	Logger logr.Logger     // every Event is logged at V(1); failures at V(0)
	// Queue and Workers: how many Events may wait to be written (default DefaultQueue) and how many are written at
	// once (default DefaultWorkers).
	Queue, Workers int
	// Retry is the wait between attempts to write an Event while the API server cannot be reached (default 10s, as
	// client-go; 12 attempts).
	Retry time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Broadcaster writes the Events of the recorders it makes. Start it (it is a manager Runnable that runs without
// leader election); Events recorded before it starts wait in its queue.
type Broadcaster struct {
	client   eventsv1client.EventsV1Interface
	o        Options
	hostname string
	queue    chan job

	mu     sync.Mutex
	series map[key]*entry
}

// key is a hash of what makes two Events repeats of one (client-go's eventKey).
type key [sha256.Size224]byte

// entry is an Event written (or queued to be) in the last seriesWindow.
type entry struct {
	namespace, name string
	count           int32     // occurrences seen
	written         int32     // the count the API server has: 0 until created, then 1, then series.count
	last, flushed   time.Time // last occurrence; last series write
}

// job is an Event to create (event set) or a series count to write (e set).
type job struct {
	event *eventsv1.Event
	k     key
	e     *entry
}

// New returns a Broadcaster that writes Events with cfg and httpClient (a manager's GetConfig and GetHTTPClient).
func New(cfg *rest.Config, httpClient *http.Client, o Options) (*Broadcaster, error) {
	c, err := eventsv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	return NewForClient(c, o), nil
}

// NewForClient is New with a client of its own.
func NewForClient(c eventsv1client.EventsV1Interface, o Options) *Broadcaster {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Retry <= 0 {
		o.Retry = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	hostname, _ := os.Hostname()
	return &Broadcaster{client: c, o: o, hostname: hostname, queue: make(chan job, o.Queue), series: map[key]*entry{}}
}

// NeedLeaderElection is false: a manager's loops that record Events may run before it is elected (a manager runs
// this Runnable at once either way).
func (b *Broadcaster) NeedLeaderElection() bool { return false }

// Start writes queued Events until ctx ends.
func (b *Broadcaster) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range b.o.Workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-b.queue:
					b.write(ctx, j)
				}
			}
		})
	}
	ticker := time.NewTicker(seriesFlush / 2)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-ticker.C:
			b.sweep()
		}
	}
}

// Recorder returns an EventRecorder whose Events name controller as their reporting controller.
func (b *Broadcaster) Recorder(controller string) events.EventRecorder {
	return &recorder{b: b, controller: controller, instance: controller + "-" + b.hostname}
}

type recorder struct {
	b                    *Broadcaster
	controller, instance string
}

// Eventf records an Event about regarding (and related, when not nil), as client-go's recorder does.
func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b := r.b
	message := fmt.Sprintf(note, args...)
	refRegarding, err := reference.GetReference(b.o.Scheme, regarding)
	if err != nil {
		b.o.Logger.Error(err, "Event not recorded: no reference to the object it is about", "reason", reason, "note", message)
		return
	}
	var refRelated *corev1.ObjectReference
	if related != nil {
		if refRelated, err = reference.GetReference(b.o.Scheme, related); err != nil {
			refRelated = nil
		}
	}
	if !util.ValidateEventType(eventtype) {
		b.o.Logger.Error(nil, "Event not recorded: type must be Normal or Warning", "type", eventtype, "reason", reason)
		return
	}
	if len(message) > noteLimit {
		message = message[:noteLimit-3] + "..."
	}
	now := b.o.Now()
	namespace := refRegarding.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(refRegarding.Name, now.UnixNano()), Namespace: namespace},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *refRegarding,
		Related:             refRelated,
		Note:                message,
		Type:                eventtype,
	}
	b.o.Logger.V(1).Info(message, "type", eventtype, "object", refRegarding, "action", action, "reason", reason)
	b.record(ev, keyOf(ev), now)
}

// record queues ev's create, or counts it as a repeat of an Event remembered under k.
func (b *Broadcaster) record(ev *eventsv1.Event, k key, now time.Time) {
	b.mu.Lock()
	e, repeat := b.series[k]
	if repeat && now.Sub(e.last) < seriesWindow {
		e.count++
		e.last = now
		second := e.count == 2 && e.written == 1
		b.mu.Unlock()
		if second { // as client-go: the second occurrence is written at once, later ones by sweep
			b.enqueue(job{k: k, e: e})
		}
		return
	}
	var remembered *entry
	if len(b.series) < maxRemembered || repeat {
		remembered = &entry{namespace: ev.Namespace, name: ev.Name, count: 1, last: now}
		b.series[k] = remembered
	}
	b.mu.Unlock()
	if !b.enqueue(job{event: ev, k: k, e: remembered}) && remembered != nil {
		b.mu.Lock()
		if b.series[k] == remembered {
			delete(b.series, k)
		}
		b.mu.Unlock()
	}
}

// enqueue queues j unless the queue is full.
func (b *Broadcaster) enqueue(j job) bool {
	select {
	case b.queue <- j:
		return true
	default:
		dropped.WithLabelValues("queue").Inc()
		b.o.Logger.V(1).Info("Event dropped: too many Events waiting to be written", "queue", cap(b.queue))
		return false
	}
}

// sweep forgets Events not repeated within seriesWindow, and queues the counts of series not written for
// seriesFlush.
func (b *Broadcaster) sweep() {
	now := b.o.Now()
	var flush []job
	b.mu.Lock()
	for k, e := range b.series {
		pending := e.written > 0 && e.count > e.written
		switch {
		case pending && now.Sub(e.flushed) >= seriesFlush:
			flush = append(flush, job{k: k, e: e})
		case !pending && now.Sub(e.last) >= seriesWindow:
			delete(b.series, k)
		}
	}
	b.mu.Unlock()
	for _, j := range flush {
		if !b.enqueue(j) {
			break
		}
	}
}

// write creates j's Event or writes its series count, retrying while the API server cannot be reached.
func (b *Broadcaster) write(ctx context.Context, j job) {
	for try := 1; ; try++ {
		err := b.attempt(ctx, j)
		if err == nil {
			return
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) || try >= 12 {
			reason := "invalid"
			if status == nil {
				reason = "unreachable"
			}
			dropped.WithLabelValues(reason).Inc()
			b.o.Logger.Error(err, "Event not written", "event", j.name())
			if j.e != nil {
				b.mu.Lock()
				if b.series[j.k] == j.e {
					delete(b.series, j.k) // a later occurrence starts a new Event
				}
				b.mu.Unlock()
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.o.Retry):
		}
	}
}

func (j job) name() string {
	if j.event != nil {
		return j.event.Namespace + "/" + j.event.Name
	}
	return j.e.namespace + "/" + j.e.name
}

// attempt makes one request for j.
func (b *Broadcaster) attempt(ctx context.Context, j job) error {
	if j.event != nil {
		_, err := b.client.Events(j.event.Namespace).Create(ctx, j.event, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err == nil && j.e != nil {
			b.mu.Lock()
			j.e.written = 1
			second := j.e.count >= 2 // repeated while the create waited: its count goes out now
			b.mu.Unlock()
			if second {
				j = job{k: j.k, e: j.e}
				return b.attempt(ctx, j)
			}
		}
		return err
	}
	b.mu.Lock()
	count, last, name, namespace := j.e.count, j.e.last, j.e.name, j.e.namespace
	b.mu.Unlock()
	patch, err := json.Marshal(map[string]any{"series": eventsv1.EventSeries{Count: count, LastObservedTime: metav1.MicroTime{Time: last}}})
	if err != nil {
		return err
	}
	if _, err := b.client.Events(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	b.mu.Lock()
	j.e.written, j.e.flushed = max(j.e.written, count), b.o.Now()
	b.mu.Unlock()
	return nil
}

// keyOf hashes what makes two Events repeats of one, as client-go's getKey: type, action, reason, reporting
// controller and instance, and the regarding and related object references.
func keyOf(ev *eventsv1.Event) key {
	h := sha256.New224()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	ref := func(r *corev1.ObjectReference) {
		if r == nil {
			field("-")
			return
		}
		for _, s := range []string{r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion, r.ResourceVersion, r.FieldPath} {
			field(s)
		}
	}
	for _, s := range []string{ev.Type, ev.Action, ev.Reason, ev.ReportingController, ev.ReportingInstance} {
		field(s)
	}
	ref(&ev.Regarding)
	ref(ev.Related)
	var k key
	h.Sum(k[:0])
	return k
}
