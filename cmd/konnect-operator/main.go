// Command konnect-operator keeps Kong Konnect in the state declared by Kubernetes objects: KonnectAPIAuthConfiguration,
// KonnectGatewayControlPlane, KongService, KongRoute and KongConsumer (Kong Gateway Operator's kinds).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/almproject/alm/controllers/konnect"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/handoff"
	"github.com/almproject/alm/internal/outage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "konnect-operator: %v\n", err)
		os.Exit(1)
	}
}

// gcPercent is the GOGC the operator runs with unless the environment sets one.
const gcPercent = 50

// options are the command's flags.
type options struct {
	metricsAddr, probeAddr, electionNS, electionID string
	pprofAddr                                      string
	leaderElect                                    bool
	syncPeriod                                     time.Duration
	mode                                           entity.DriftMode
	rateLimit                                      float64
	concurrency, partReads                         int
	kubeQPS                                        float64
	watchNamespaces                                string
	tagScheme                                      string
	kubeBurst                                      int
	zap                                            zap.Options
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil || o == nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if os.Getenv("GOGC") == "" {
		// Collect garbage when the heap has grown by half since the last collection (Go's default: doubled). Reconciles
		// allocate fast (copies from the cache, JSON, HTTP), so at the default the process's peak resident memory is
		// about three times what it really holds: with 10,000 entities (BenchmarkKonnectScale) 312 MB at the default, 207 MB
		// at 50. The price is a little more CPU for the collector.
		debug.SetGCPercent(gcPercent)
	}
	log := ctrl.Log.WithName("konnect-operator")
	mgr, err := newManager(o)
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := konnect.Setup(ctx, mgr, konnect.Options{
		SyncPeriod: o.syncPeriod, DriftMode: o.mode, RateLimit: o.rateLimit, MaxConcurrentReconciles: o.concurrency,
		TagScheme: entity.TagScheme(o.tagScheme), Handoff: handoff.TargetFromEnv(os.Getenv), PartReads: o.partReads,
	}); err != nil {
		return fmt.Errorf("setting up the loops: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting", "syncPeriod", o.syncPeriod.String(), "driftDetection", string(o.mode), "konnectRateLimit", o.rateLimit,
		"tagScheme", o.tagScheme, "partReads", o.partReads)
	return mgr.Start(ctx)
}

// parseFlags reads the flags; nil options (and no error) means --help was printed.
func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("konnect-operator", flag.ContinueOnError)
	driftMode := o.bind(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `konnect-operator synchronises Kubernetes objects to Kong Konnect: KonnectAPIAuthConfiguration and
KonnectGatewayControlPlane (konnect.konghq.com), KongService, KongRoute (configuration.konghq.com/v1alpha1) and
KongConsumer (configuration.konghq.com/v1). Creates and changes are sent at once; every sync period Konnect is
brought back to the declared state; deleting an object deletes its Konnect entity (through a finalizer).

It uses the cluster in --kubeconfig, else $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config.

Usage: konnect-operator [flags]

Flags:
`)
		fs.PrintDefaults()
	}
	if kf := flag.CommandLine.Lookup("kubeconfig"); kf != nil {
		fs.Var(kf.Value, kf.Name, "Path to a kubeconfig. Only required when running outside a cluster.")
	}
	// A bad flag is one line in the log, not the whole usage; --help prints the usage.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return nil, nil
		}
		return nil, fmt.Errorf("%w (see --help)", err)
	}
	if o.kubeQPS <= 0 || o.kubeBurst <= 0 {
		return nil, fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %g and %d", o.kubeQPS, o.kubeBurst)
	}
	if o.syncPeriod <= 0 {
		return nil, fmt.Errorf("--sync-period must be positive, got %s", o.syncPeriod)
	}
	if o.partReads <= 0 {
		return nil, fmt.Errorf("--part-reads-per-period must be positive, got %d", o.partReads)
	}
	if err := entity.CheckTagScheme(entity.TagScheme(o.tagScheme)); err != nil {
		return nil, fmt.Errorf("--tag-scheme: %w", err)
	}
	o.mode = entity.DriftMode(*driftMode)
	if o.mode != entity.DriftModeList && o.mode != entity.DriftModeUpdate {
		return nil, fmt.Errorf("--drift-detection must be %q or %q, got %q", entity.DriftModeList, entity.DriftModeUpdate, *driftMode)
	}
	return o, nil
}

// bind defines the flags on fs; the drift mode is returned as written, to be checked after parsing.
func (o *options) bind(fs *flag.FlagSet) *string {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080",
		"Address the Prometheus metrics endpoint (/metrics) listens on; \"0\" disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"Address the liveness (/healthz) and readiness (/readyz) probes listen on.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"Address Go's profiles (/debug/pprof/) are served on; empty (the default) serves none.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader through a Lease so that only one replica talks to Konnect. Enable when running more than one replica.")
	fs.StringVar(&o.electionNS, "leader-election-namespace", "",
		"Namespace of the leader election Lease. Default: the namespace the operator runs in (in-cluster).")
	fs.StringVar(&o.electionID, "leader-election-id", "konnect-operator", "Name of the leader election Lease.")
	fs.DurationVar(&o.syncPeriod, "sync-period", time.Minute,
		"How long an unchanged object waits before Konnect is brought back to its declared state, so that changes made\n"+
			"in Konnect (e.g. in the UI) are overwritten within one period. Changes in Kubernetes are applied at once.\n"+
			"Shorter periods cost more Konnect API calls.")
	driftMode := fs.String("drift-detection", string(entity.DriftModeList),
		"How out-of-band changes are found once per sync period: \"list\" lists each control plane's entities (a few\n"+
			"paginated calls) and updates only what differs; \"update\" calls update for every object, as the\n"+
			"reconciliation loop's flowchart does literally (one call per object per period).")
	fs.IntVar(&o.partReads, "part-reads-per-period", entity.DefaultPartReads,
		"With --drift-detection=list: how many entities of one control plane (per kind) get their parts checked each\n"+
			"sync period, where Konnect has no list of them: a consumer group's members, a consumer's credentials, a\n"+
			"control plane group's members (these per auth configuration). They take turns, the one checked longest ago\n"+
			"first, so with N of them each is checked, and drift in Konnect repaired, at least every ceil(N/this) sync\n"+
			"periods, and steady-state calls stay a few per control plane however many there are. A change in Kubernetes\n"+
			"syncs the object's parts at once, outside this budget.")
	fs.Float64Var(&o.rateLimit, "konnect-rate-limit", 10,
		"Most Konnect API requests per second sent to one Konnect organization (shared by every auth configuration of\n"+
			"that organization); 0 means unlimited. Below this ceiling the operator follows the budget Konnect's answers\n"+
			"announce (RateLimit-Remaining and RateLimit-Reset, or X-RateLimit-Remaining-Minute), so that it lasts until\n"+
			"the window resets; waiting requests go by priority: deletes and creates, then updates, then reads. A 429\n"+
			"answer also pauses the organization for its Retry-After.")
	fs.IntVar(&o.concurrency, "concurrency", 8, "Objects of one kind reconciled in parallel.")
	fs.Float64Var(&o.kubeQPS, "kube-api-qps", 50,
		"Most requests per second to the Kubernetes API (each Konnect create or update ends in a status write).")
	fs.IntVar(&o.kubeBurst, "kube-api-burst", 100, "Burst of requests to the Kubernetes API above --kube-api-qps.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces whose objects the operator syncs (and whose Secrets it reads); empty: every namespace.")
	fs.StringVar(&o.tagScheme, "tag-scheme", string(entity.TagSchemeV1),
		"The identity tags (labels on control planes) entities get: \"v1\" k8s-uid, k8s-kind, k8s-namespace, k8s-name;\n"+
			"\"v2\" adds k8s-group and k8s-version, as Kong Gateway Operator tags its entities. Identity tags of the other\n"+
			"scheme are kept. Under ALM (OPERATOR_VERSION_NAME set), the hand-over of an upgrade re-tags every entity\n"+
			"the replaced version wrote to this scheme, in place, before ALM moves ownership.")
	o.zap.BindFlags(fs)
	return driftMode
}

// newManager makes the manager for the cluster in --kubeconfig, $KUBECONFIG or in-cluster.
func newManager(o *options) (ctrl.Manager, error) {
	scheme, err := konnect.NewScheme()
	if err != nil {
		return nil, err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to talk to: %w (pass --kubeconfig or set KUBECONFIG)", err)
	}
	// Each Konnect write ends in a status write: client-go's default of 5 requests/s would throttle the operator
	// well below the Konnect rate limit.
	cfg.QPS, cfg.Burst = float32(o.kubeQPS), o.kubeBurst
	// The cache holds every object the operator syncs; their managedFields (often the larger part of a small object)
	// are never read: dropping them keeps the memory of 10,000 objects well within bounds.
	// NewInformer: the cache resumes within seconds of the API server's return after a restart, not after client-go's
	// reflector backoff of up to a minute (package outage).
	watch := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), NewInformer: outage.NewInformer}
	for ns := range strings.SplitSeq(o.watchNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			if watch.DefaultNamespaces == nil {
				watch.DefaultNamespaces = map[string]cache.Config{}
			}
			watch.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         watch,
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              o.electionID,
		LeaderElectionNamespace:       o.electionNS,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}
