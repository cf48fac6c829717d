package eventrec

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{NoControllerManager: true}, &cp))
}

// clock is a settable clock for the series windows. It moves a microsecond at every reading, as a real one would
// between two Events (whose names are made from the time).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Microsecond)
	return c.now
}
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// setup makes a namespace, a ConfigMap in it for the Events to be about, and a started Broadcaster with clock c.
func setup(t *testing.T, c *clock, o Options) (*kubernetes.Clientset, *corev1.ConfigMap, *Broadcaster) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ns := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	o.Scheme, o.Logger, o.Now = scheme.Scheme, logr.Discard(), c.Now
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cp.Config, hc, o)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cm, b
}

func start(t *testing.T, b *Broadcaster) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// listEvents lists the Events in namespace, polling until want says they are as expected (bounded).
func listEvents(t *testing.T, cs *kubernetes.Clientset, namespace, what string, want func([]eventsv1.Event) bool) []eventsv1.Event {
	t.Helper()
	var list *eventsv1.EventList
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if list, err = cs.EventsV1().Events(namespace).List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if want(list.Items) {
			return list.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20s; Events: %s", what, describe(list.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(evs []eventsv1.Event) string {
	var parts []string
	for _, e := range evs {
		count := int32(1)
		if e.Series != nil {
			count = e.Series.Count
		}
		parts = append(parts, fmt.Sprintf("%s %s %q x%d", e.Name, e.Reason, e.Note, count))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func seriesCount(e eventsv1.Event) int32 {
	if e.Series == nil {
		return 1
	}
	return e.Series.Count
}

// The Event is what client-go's recorder writes: regarding and related references, reporting controller and
// instance, type, reason, action, note and time.
func TestEventFields(t *testing.T) {
	c := &clock{now: time.Now()}
	cs, cm, b := setup(t, c, Options{})
	start(t, b)
	related := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace, UID: "ns-uid"}}
	related.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	b.Recorder("gc").Eventf(cm, related, corev1.EventTypeWarning, "Deleting", "Delete", "Replaced by %s", "v2")
	evs := listEvents(t, cs, cm.Namespace, "one Event", func(evs []eventsv1.Event) bool { return len(evs) == 1 })
	e := evs[0]
	host, _ := os.Hostname()
	if e.Regarding.Kind != "ConfigMap" || e.Regarding.Name != "subject" || e.Regarding.UID != cm.UID || e.Related == nil || e.Related.Name != cm.Namespace ||
		e.ReportingController != "gc" || e.ReportingInstance != "gc-"+host || e.Type != corev1.EventTypeWarning || e.Reason != "Deleting" ||
		e.Action != "Delete" || e.Note != "Replaced by v2" || !strings.HasPrefix(e.Name, "subject.") || e.EventTime.IsZero() || e.Series != nil {
		t.Errorf("Event written: %+v", e)
	}
	// A note over the API server's 1 kB limit is cut, not refused.
	b.Recorder("gc").Eventf(cm, nil, corev1.EventTypeNormal, "Long", "Delete", "%s", strings.Repeat("x", 3000))
	listEvents(t, cs, cm.Namespace, "the long note cut to 1024 bytes", func(evs []eventsv1.Event) bool {
		for _, e := range evs {
			if e.Reason == "Long" {
				return len(e.Note) == noteLimit
			}
		}
		return false
	})
}

// Repeats become one Event with a series: the second occurrence writes count 2 at once, later ones are written
// within a minute, and after six quiet minutes the next occurrence is a new Event. A different reason or object is
// a different Event.
func TestRepeatsAreASeries(t *testing.T) {
	c := &clock{now: time.Now()}
	cs, cm, b := setup(t, c, Options{})
	start(t, b)
	rec := b.Recorder("apptype")
	first := c.Now()
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Install", "try %d", 1)
	listEvents(t, cs, cm.Namespace, "the first occurrence created", func(evs []eventsv1.Event) bool { return len(evs) == 1 })
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Install", "try %d", 2)
	listEvents(t, cs, cm.Namespace, "the second occurrence written as series.count 2", func(evs []eventsv1.Event) bool {
		return len(evs) == 1 && seriesCount(evs[0]) == 2
	})
	for i := 3; i <= 10; i++ {
		c.add(time.Second)
		rec.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Install", "try %d", i)
	}
	c.add(seriesFlush)
	b.sweep()
	evs := listEvents(t, cs, cm.Namespace, "ten occurrences in one Event", func(evs []eventsv1.Event) bool {
		return len(evs) == 1 && seriesCount(evs[0]) == 10
	})
	if last := evs[0].Series.LastObservedTime.Time; evs[0].Note != "try 1" || last.Before(first.Add(8*time.Second)) || last.After(first.Add(9*time.Second)) {
		t.Errorf("series Event: note %q (want the first's), last observed %v (want the tenth's)", evs[0].Note, evs[0].Series.LastObservedTime)
	}
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Succeeded", "Install", "done")
	listEvents(t, cs, cm.Namespace, "another reason: another Event", func(evs []eventsv1.Event) bool { return len(evs) == 2 })
	c.add(seriesWindow)
	b.sweep()
	b.mu.Lock()
	remembered := len(b.series)
	b.mu.Unlock()
	if remembered != 0 {
		t.Errorf("%d Events remembered after six quiet minutes, want 0", remembered)
	}
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Install", "try %d", 11)
	listEvents(t, cs, cm.Namespace, "a repeat after six quiet minutes: a new Event", func(evs []eventsv1.Event) bool { return len(evs) == 3 })
}

// A full queue drops Events (counted) instead of holding them: recording never blocks a reconcile, and memory is
// bounded by the queue.
func TestFullQueueDrops(t *testing.T) {
	c := &clock{now: time.Now()}
	cs, cm, b := setup(t, c, Options{Queue: 5})
	before := testutil.ToFloat64(dropped.WithLabelValues("queue"))
	rec := b.Recorder("install")
	done := make(chan struct{})
	go func() {
		for i := range 8 { // not started: nothing is written yet
			rec.Eventf(cm, nil, corev1.EventTypeNormal, fmt.Sprintf("Reason%d", i), "Install", "event %d", i)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Eventf blocked on a full queue")
	}
	if got := testutil.ToFloat64(dropped.WithLabelValues("queue")) - before; got != 3 {
		t.Errorf("alm_events_dropped_total{reason=queue} rose by %v, want 3", got)
	}
	start(t, b)
	evs := listEvents(t, cs, cm.Namespace, "the 5 queued Events written", func(evs []eventsv1.Event) bool { return len(evs) == 5 })
	for _, e := range evs {
		if e.Reason >= "Reason5" {
			t.Errorf("a dropped Event was written: %s", e.Reason)
		}
	}
}

// An Event the API server refuses is dropped and counted, and the next one is written.
func TestRefusedEventIsDropped(t *testing.T) {
	c := &clock{now: time.Now()}
	cs, cm, b := setup(t, c, Options{})
	start(t, b)
	before := testutil.ToFloat64(dropped.WithLabelValues("invalid"))
	rec := b.Recorder("install")
	rec.Eventf(cm, nil, corev1.EventTypeNormal, strings.Repeat("R", 200), "Install", "reason too long") // reason: at most 128
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Fine", "Install", "written")
	listEvents(t, cs, cm.Namespace, "the valid Event written", func(evs []eventsv1.Event) bool { return len(evs) == 1 && evs[0].Reason == "Fine" })
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(dropped.WithLabelValues("invalid")) == before {
		if time.Now().After(deadline) {
			t.Fatal("alm_events_dropped_total{reason=invalid} did not rise")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
