// Package metrics holds ALM's Prometheus metrics, served on the manager's metrics endpoint (controller-runtime's
// registry) beside controller-runtime's own: the phase of every OperatorVersion and how long its last phase change
// took, installs and upgrades by package and result, resolution failures by reason, adoption hand-overs, and the
// state of every CatalogSource. Per-object figures are read from the manager's cache at each scrape, so an object
// that is deleted drops its series at once; counters are counted by the loops when their status write succeeds.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names. Kept as OLM's and Kubernetes' own metrics name them.
const (
	LabelNamespace = "namespace"
	LabelName      = "name"
	LabelPackage   = "package"
	LabelVersion   = "version"
	LabelPhase     = "phase"
	LabelResult    = "result"
	LabelReason    = "reason"
	LabelState     = "state"
)

// Results of an install or upgrade.
const (
	ResultSucceeded = "succeeded"
	ResultFailed    = "failed"
)

// Metric names, as the README's metrics table lists them.
const (
	NameOperatorVersionPhase          = "alm_operatorversion_phase"
	NameOperatorVersionTransitionSecs = "alm_operatorversion_phase_transition_seconds"
	NameInstalls                      = "alm_installs_total"
	NameUpgrades                      = "alm_upgrades_total"
	NameResolutionFailures            = "alm_resolution_failures_total"
	NameAdoptions                     = "alm_adoption_handovers_total"
	NameCatalogSourceReady            = "alm_catalogsource_ready"
	NameCatalogSourcePackages         = "alm_catalogsource_packages"
	NameCatalogSourceBundles          = "alm_catalogsource_bundles"
	NameCatalogSourceRejectedBundles  = "alm_catalogsource_rejected_bundles"
	NameCatalogSourceLastSyncAge      = "alm_catalogsource_last_sync_age_seconds"
	NameRolloutWave                   = "alm_rollout_wave"
	NameRolloutWaves                  = "alm_rollout_waves"
	NameRolloutHalted                 = "alm_rollout_halted"
	NameRolloutInstalls               = "alm_rollout_installs"
)

var (
	installs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameInstalls,
		Help: "OperatorVersions that replace no installed version and reached Succeeded or Failed, by package and result (succeeded, failed).",
	}, []string{LabelPackage, LabelResult})
	upgrades = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameUpgrades,
		Help: "OperatorVersions that replace an installed version and reached Succeeded or Failed, by package and result (succeeded, failed).",
	}, []string{LabelPackage, LabelResult})
	resolutionFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameResolutionFailures,
		Help: "Times an AppType's resolution started failing, or failed for another reason than before, by reason (the Resolved condition's).",
	}, []string{LabelReason})
	adoptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameAdoptions,
		Help: "Hand-overs of an old OperatorVersion's objects to the version that replaces it (the old one went Replacing), by package.",
	}, []string{LabelPackage})
)

func init() {
	crmetrics.Registry.MustRegister(installs, upgrades, resolutionFailures, adoptions, objects)
}
