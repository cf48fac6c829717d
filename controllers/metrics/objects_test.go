package metrics

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	semver "github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// versions makes n OperatorVersions over n/10 namespaces, 5 packages, two versions (one with a pre-release) and
// every phase, and a collector that saw the phase changes of every third.
func versions(n int) ([]*operatorsv1alpha1.OperatorVersion, *collector) {
	phases := []operatorsv1alpha1.OperatorVersionPhase{"", operatorsv1alpha1.PhasePending, operatorsv1alpha1.PhaseInstalling,
		operatorsv1alpha1.PhaseSucceeded, operatorsv1alpha1.PhaseFailed, operatorsv1alpha1.PhaseReplacing}
	vs := []semver.Version{semver.MustParse("1.0.0"), semver.MustParse("2.0.0-rc.1+build.5")}
	c := &collector{last: map[types.NamespacedName]transition{}}
	ovs := make([]*operatorsv1alpha1.OperatorVersion, n)
	for i := range ovs {
		ov := &operatorsv1alpha1.OperatorVersion{}
		ovs[i] = ov
		ov.Namespace, ov.Name, ov.UID = fmt.Sprintf("ns-%d", i/10), fmt.Sprintf("pkg-%d.v%d", i%5, i), types.UID(fmt.Sprint("uid-", i))
		ov.Spec.PackageName, ov.Spec.Version = fmt.Sprintf("pkg-%d", i%5), version.OperatorVersion{Version: vs[i%2]}
		ov.Status.Phase = phases[i%len(phases)]
		ov.CreationTimestamp = metav1.NewTime(time.Unix(1000, 0))
		if i%3 == 0 && ov.Status.Phase != "" {
			c.transitioned(ov, ov.Status.Phase, time.Unix(1000+int64(i), 0))
		}
	}
	return ovs, c
}

// collectFunc is a prometheus.Collector of a function's series.
type collectFunc func(chan<- prometheus.Metric)

func (f collectFunc) Describe(ch chan<- *prometheus.Desc) { ch <- descPhase; ch <- descTransition }
func (f collectFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// exposition gathers f from a pedantic registry (which checks every series against its description) in the text
// format a Prometheus scrapes.
func exposition(t testing.TB, f collectFunc) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(f)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&out, mf); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// The series that share their label pairs are the ones prometheus.MustNewConstMetric makes, label for label and
// value for value.
func TestCollectVersionsAsConstMetrics(t *testing.T) {
	ovs, c := versions(60)
	got := exposition(t, func(ch chan<- prometheus.Metric) { c.collectVersions(ch, ovs) })
	want := exposition(t, func(ch chan<- prometheus.Metric) {
		for i := range ovs {
			ov := ovs[i]
			phase := string(ov.Status.Phase)
			if phase == "" {
				phase = "Unknown"
			}
			labels := []string{ov.Namespace, ov.Name, ov.Spec.PackageName, ov.Spec.Version.String(), phase}
			ch <- prometheus.MustNewConstMetric(descPhase, prometheus.GaugeValue, 1, labels...)
			if tr, ok := c.last[types.NamespacedName{Namespace: ov.Namespace, Name: ov.Name}]; ok && string(tr.phase) == phase {
				ch <- prometheus.MustNewConstMetric(descTransition, prometheus.GaugeValue, tr.took.Seconds(), labels...)
			}
		}
	})
	if got != want {
		t.Errorf("series differ from the const metrics'.\ngot:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{`alm_operatorversion_phase{name="pkg-1.v1",namespace="ns-0",package="pkg-1",phase="Pending",version="2.0.0-rc.1+build.5"} 1`,
		`alm_operatorversion_phase_transition_seconds{name="pkg-3.v3",namespace="ns-0",package="pkg-3",phase="Succeeded",version="2.0.0-rc.1+build.5"} 3`} {
		if !bytes.Contains([]byte(got), []byte(s)) {
			t.Errorf("no series %s in:\n%s", s, got)
		}
	}
}

// BenchmarkCollectVersions is the memory a scrape of ten thousand OperatorVersions takes for their series.
func BenchmarkCollectVersions(b *testing.B) {
	ovs, c := versions(10000)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectFunc(func(ch chan<- prometheus.Metric) { c.collectVersions(ch, ovs) }))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
