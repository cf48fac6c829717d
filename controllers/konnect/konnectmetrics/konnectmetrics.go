// Package konnectmetrics holds the Konnect operator's Prometheus metrics, served on its manager's metrics endpoint
// beside controller-runtime's: every HTTP request to Konnect by operation, entity type and status code with its
// duration (label names as Kong Gateway Operator's Konnect metrics have them), the time spent waiting for the
// per-organization rate limit and for 429s' Retry-After, drift corrections by kind, and objects by Programmed state.
// It is the operator's own: it imports nothing of ALM.
package konnectmetrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names.
const (
	LabelServerURL     = "server_url"
	LabelOperationType = "operation_type"
	LabelEntityType    = "entity_type"
	LabelSuccess       = "success"
	LabelStatusCode    = "status_code"
	LabelCause         = "cause"
	LabelKind          = "kind"
	LabelProgrammed    = "programmed"
)

// Operation types beyond the verbs of the API calls (create, update, delete, list, get, set).
const (
	// OperationAdopt: the look-up (and, if it drifted, update) of an entity an earlier create made.
	OperationAdopt = "adopt"
)

// Causes of a wait before a request.
const (
	CauseRateLimit  = "rate_limit"
	CauseRetryAfter = "retry_after"
)

// Metric names, as the README's metrics table lists them.
const (
	NameRequests         = "konnect_operator_requests_total"
	NameRequestDuration  = "konnect_operator_request_duration_seconds"
	NameWaitSeconds      = "konnect_operator_rate_limit_wait_seconds_total"
	NameDriftCorrections = "konnect_operator_drift_corrections_total"
	NameObjects          = "konnect_operator_objects"
)

var (
	requestLabels = []string{LabelServerURL, LabelOperationType, LabelEntityType, LabelSuccess, LabelStatusCode}
	requests      = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameRequests,
		Help: "HTTP requests sent to Konnect (each page of a list, each retry after a 429 counts), by server URL, operation type (create, update, delete, list, get, set, adopt), entity type, success and status code (0: no answer).",
	}, requestLabels)
	durations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    NameRequestDuration,
		Help:    "Seconds from sending an HTTP request to Konnect to its answer (waits for the rate limit not included), with the labels of " + NameRequests + ".",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, requestLabels)
	waits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameWaitSeconds,
		Help: "Seconds requests waited before being sent, by server URL and cause: rate_limit (the per-organization client-side limit, --konnect-rate-limit) or retry_after (the pause a 429's Retry-After imposes on the organization).",
	}, []string{LabelServerURL, LabelCause})
	drift = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameDriftCorrections,
		Help: "Entities found changed or missing in Konnect (drift detection \"list\") and brought back to their object's declared state, by kind.",
	}, []string{LabelKind})
	descObjects = prometheus.NewDesc(NameObjects, "Objects the operator syncs, by kind and Programmed condition status (True, False, Unknown: no condition yet).",
		[]string{LabelKind, LabelProgrammed}, nil)
)

func init() {
	crmetrics.Registry.MustRegister(requests, durations, waits, drift, objects)
}

// ObserveRequest records one HTTP request to Konnect: code is the status code, 0 when no answer came.
func ObserveRequest(serverURL, operation, entityType string, code int, took time.Duration) {
	success := strconv.FormatBool(code >= 200 && code < 400)
	labels := []string{serverURL, operation, entityType, success, strconv.Itoa(code)}
	requests.WithLabelValues(labels...).Inc()
	durations.WithLabelValues(labels...).Observe(took.Seconds())
}

// ObserveWait records time a request waited before it was sent, for cause.
func ObserveWait(serverURL, cause string, waited time.Duration) {
	if waited > 0 {
		waits.WithLabelValues(serverURL, cause).Add(waited.Seconds())
	}
}

// DriftCorrected records that an entity of kind was found drifted and was written back.
func DriftCorrected(kind string) {
	drift.WithLabelValues(kind).Inc()
}

// CountFunc counts the objects of one kind by Programmed condition status.
type CountFunc func(ctx context.Context) (map[string]int, error)

// objects counts the objects of every kind at each scrape, so deleted objects drop out at once.
var objects = &collector{kinds: map[string]CountFunc{}}

// CountObjects makes the metrics endpoint report the objects of kind, counted by count (the last call for a kind
// wins: a process runs one manager at a time).
func CountObjects(kind string, count CountFunc) {
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.kinds[kind] = count
}

type collector struct {
	mu    sync.Mutex
	kinds map[string]CountFunc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { ch <- descObjects }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	kinds := make(map[string]CountFunc, len(c.kinds))
	for k, f := range c.kinds {
		kinds[k] = f
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for kind, count := range kinds {
		counts, err := count(ctx)
		if err != nil {
			continue
		}
		for _, status := range []string{"True", "False", "Unknown"} {
			ch <- prometheus.MustNewConstMetric(descObjects, prometheus.GaugeValue, float64(counts[status]), kind, status)
		}
	}
}
