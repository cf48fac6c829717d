package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

var (
	descPhase = prometheus.NewDesc(NameOperatorVersionPhase,
		"1 for every OperatorVersion, labelled with its phase (Pending, InstallReady, Installing, Succeeded, Failed, Replacing, Deleting; Unknown before the first status write): what OLM's csv_succeeded and csv_abnormal give.",
		[]string{LabelNamespace, LabelName, LabelPackage, LabelVersion, LabelPhase}, nil)
	descTransition = prometheus.NewDesc(NameOperatorVersionTransitionSecs,
		"Seconds the OperatorVersion's last phase change took: from the previous change this ALM process saw (else from its creation) to the change into the labelled phase.",
		[]string{LabelNamespace, LabelName, LabelPackage, LabelVersion, LabelPhase}, nil)
	catalogLabels  = []string{LabelNamespace, LabelName}
	descCatReady   = prometheus.NewDesc(NameCatalogSourceReady, "1 when the CatalogSource's Ready condition is True, else 0.", catalogLabels, nil)
	descCatPkgs    = prometheus.NewDesc(NameCatalogSourcePackages, "Packages the CatalogSource serves (status.packageCount).", catalogLabels, nil)
	descCatBundles = prometheus.NewDesc(NameCatalogSourceBundles, "Bundles the CatalogSource serves (status.bundleCount).", catalogLabels, nil)
	descCatReject  = prometheus.NewDesc(NameCatalogSourceRejectedBundles, "Bundles the CatalogSource rejected (status.rejectedCount).", catalogLabels, nil)
	descCatAge     = prometheus.NewDesc(NameCatalogSourceLastSyncAge, "Seconds since the CatalogSource last loaded its catalog (status.lastSync); absent before the first sync.", catalogLabels, nil)
	rolloutLabels  = []string{LabelNamespace, LabelName, LabelPackage, LabelVersion}
	descWave       = prometheus.NewDesc(NameRolloutWave, "The current wave (from 1) of the rollout of a version by a CatalogSource's spec.rollout (status.rollouts[].wave).", rolloutLabels, nil)
	descWaves      = prometheus.NewDesc(NameRolloutWaves, "How many waves the rollout of a version has (status.rollouts[].waves).", rolloutLabels, nil)
	descHalted     = prometheus.NewDesc(NameRolloutHalted, "1 when the rollout of a version is halted because an install failed, else 0.", rolloutLabels, nil)
	descRollInst   = prometheus.NewDesc(NameRolloutInstalls, "Installs of the rollout of a version by state (upgraded, upgrading, held, failed, pending).",
		append(append([]string{}, rolloutLabels...), LabelState), nil)
)

// scrapeTimeout bounds the cache reads of one scrape (a cache that is not synced yet blocks them).
const scrapeTimeout = 5 * time.Second

// objects is the collector of the per-object figures; Watch gives it the manager's cache to read.
var objects = &collector{last: map[types.NamespacedName]transition{}}

// Watch makes the metrics endpoint report the OperatorVersions and CatalogSources that reader (the manager's cache)
// holds. The last call wins: a process runs one manager at a time.
func Watch(reader client.Reader) {
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.reader = reader
}

// transition is an OperatorVersion's last phase change.
type transition struct {
	uid   types.UID
	phase operatorsv1alpha1.OperatorVersionPhase
	at    time.Time
	took  time.Duration
}

type collector struct {
	mu     sync.Mutex
	reader client.Reader
	last   map[types.NamespacedName]transition
}

func (c *collector) transitioned(ov *operatorsv1alpha1.OperatorVersion, to operatorsv1alpha1.OperatorVersionPhase, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := types.NamespacedName{Namespace: ov.Namespace, Name: ov.Name}
	since := ov.CreationTimestamp.Time
	if prev, ok := c.last[key]; ok && prev.uid == ov.UID {
		since = prev.at
	}
	c.last[key] = transition{uid: ov.UID, phase: to, at: now, took: now.Sub(since)}
}

// Describe sends the descriptors of the per-object metrics.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPhase, descTransition, descCatReady, descCatPkgs, descCatBundles, descCatReject, descCatAge,
		descWave, descWaves, descHalted, descRollInst} {
		ch <- d
	}
}

// Collect reads the OperatorVersions and CatalogSources from the cache and sends one series per object; the phase
// changes of objects that are gone are forgotten.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader := c.reader
	c.mu.Unlock()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if ovs, err := versionsIn(ctx, reader); err == nil {
		c.collectVersions(ch, ovs)
	}
	cats := &operatorsv1alpha1.CatalogSourceList{}
	if err := reader.List(ctx, cats, client.UnsafeDisableDeepCopy); err == nil {
		collectCatalogs(ch, cats.Items, time.Now())
	}
}

// versionsIn lists the OperatorVersions reader holds, read-only. From the manager's cache they are its own objects,
// read from its informer's store: a List, even without deep copies, copies every OperatorVersion into a new array
// (a thousand OperatorVersions are megabytes of garbage every scrape). Another reader is listed.
func versionsIn(ctx context.Context, reader client.Reader) ([]*operatorsv1alpha1.OperatorVersion, error) {
	if informers, ok := reader.(cache.Informers); ok {
		informer, err := informers.GetInformer(ctx, &operatorsv1alpha1.OperatorVersion{})
		if err != nil {
			return nil, err
		}
		if store, ok := informer.(interface{ GetStore() toolscache.Store }); ok {
			items := store.GetStore().List()
			out := make([]*operatorsv1alpha1.OperatorVersion, 0, len(items))
			for _, item := range items {
				if ov, ok := item.(*operatorsv1alpha1.OperatorVersion); ok {
					out = append(out, ov)
				}
			}
			return out, nil
		}
	}
	list := &operatorsv1alpha1.OperatorVersionList{}
	if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*operatorsv1alpha1.OperatorVersion, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// collectVersions sends two series per OperatorVersion: its phase, and how long its last phase change took. The
// series of one version share one list of label pairs, and the pairs of namespaces, packages, versions and phases
// are shared by all the versions that have them (labelPairs): at ten thousand versions, a pair of its own per
// series and label (prometheus.MustNewConstMetric) was most of the memory a scrape took.
func (c *collector) collectVersions(ch chan<- prometheus.Metric, ovs []*operatorsv1alpha1.OperatorVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := make(map[types.NamespacedName]bool, len(ovs))
	shared := labelPairs{}
	for _, ov := range ovs {
		key := types.NamespacedName{Namespace: ov.Namespace, Name: ov.Name}
		seen[key] = true
		phase := string(ov.Status.Phase)
		if phase == "" {
			phase = "Unknown"
		}
		// In the order of the label names, as the registry wants them (name, namespace, package, phase, version).
		labels := []*dto.LabelPair{{Name: &nameLabel, Value: &ov.Name}, shared.get(LabelNamespace, ov.Namespace),
			shared.get(LabelPackage, ov.Spec.PackageName), shared.get(LabelPhase, phase), shared.get(LabelVersion, ov.Spec.Version.String())}
		ch <- gauge{desc: descPhase, value: 1, labels: labels}
		if t, ok := c.last[key]; ok && t.uid == ov.UID && string(t.phase) == phase {
			ch <- gauge{desc: descTransition, value: t.took.Seconds(), labels: labels}
		}
	}
	for key := range c.last {
		if !seen[key] {
			delete(c.last, key)
		}
	}
}

// nameLabel is the name of the name label, for label pairs that point to it.
var nameLabel = LabelName

// labelPairs are the label pairs of one scrape, by label name and value, each made once.
type labelPairs map[[2]string]*dto.LabelPair

func (p labelPairs) get(name, value string) *dto.LabelPair {
	k := [2]string{name, value}
	lp, ok := p[k]
	if !ok {
		lp = &dto.LabelPair{Name: proto.String(name), Value: proto.String(value)}
		p[k] = lp
	}
	return lp
}

// gauge is a gauge series whose label pairs are given sorted by name (series of one scrape share them).
type gauge struct {
	desc   *prometheus.Desc
	value  float64
	labels []*dto.LabelPair
}

func (g gauge) Desc() *prometheus.Desc { return g.desc }

func (g gauge) Write(out *dto.Metric) error {
	out.Label, out.Gauge = g.labels, &dto.Gauge{Value: proto.Float64(g.value)}
	return nil
}

func collectCatalogs(ch chan<- prometheus.Metric, cats []operatorsv1alpha1.CatalogSource, now time.Time) {
	for i := range cats {
		cs := &cats[i]
		labels := []string{cs.Namespace, cs.Name}
		ready := 0.0
		if apimeta.IsStatusConditionTrue(cs.Status.Conditions, operatorsv1alpha1.ConditionReady) {
			ready = 1
		}
		ch <- prometheus.MustNewConstMetric(descCatReady, prometheus.GaugeValue, ready, labels...)
		ch <- prometheus.MustNewConstMetric(descCatPkgs, prometheus.GaugeValue, float64(cs.Status.PackageCount), labels...)
		ch <- prometheus.MustNewConstMetric(descCatBundles, prometheus.GaugeValue, float64(cs.Status.BundleCount), labels...)
		ch <- prometheus.MustNewConstMetric(descCatReject, prometheus.GaugeValue, float64(cs.Status.RejectedCount), labels...)
		if cs.Status.LastSync != nil {
			ch <- prometheus.MustNewConstMetric(descCatAge, prometheus.GaugeValue, now.Sub(cs.Status.LastSync.Time).Seconds(), labels...)
		}
		collectRollouts(ch, cs)
	}
}

// collectRollouts sends the figures of cs's rollouts (status.rollouts).
func collectRollouts(ch chan<- prometheus.Metric, cs *operatorsv1alpha1.CatalogSource) {
	for _, ro := range cs.Status.Rollouts {
		labels := []string{cs.Namespace, cs.Name, ro.Package, ro.Version}
		halted := 0.0
		if ro.Phase == operatorsv1alpha1.RolloutHalted {
			halted = 1
		}
		ch <- prometheus.MustNewConstMetric(descWave, prometheus.GaugeValue, float64(ro.Wave), labels...)
		ch <- prometheus.MustNewConstMetric(descWaves, prometheus.GaugeValue, float64(ro.Waves), labels...)
		ch <- prometheus.MustNewConstMetric(descHalted, prometheus.GaugeValue, halted, labels...)
		for state, n := range map[string]int32{"upgraded": ro.Upgraded, "upgrading": ro.Upgrading, "held": ro.Held, "failed": ro.Failed, "pending": ro.Pending} {
			ch <- prometheus.MustNewConstMetric(descRollInst, prometheus.GaugeValue, float64(n), append(labels[:4:4], state)...)
		}
	}
}
