// Command konnect-operator keeps Kong Konnect in the state declared by Kubernetes objects: KonnectAPIAuthConfiguration,
// KonnectGatewayControlPlane, KongService, KongRoute and KongConsumer (Kong Gateway Operator's kinds).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/almproject/alm/controllers/konnect"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "konnect-operator: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("konnect-operator", flag.ContinueOnError)
	var (
		metricsAddr, probeAddr, electionNS, electionID, driftMode string
		leaderElect                                               bool
		syncPeriod                                                time.Duration
		rateLimit                                                 float64
		concurrency                                               int
	)
	fs.StringVar(&metricsAddr, "metrics-bind-address", ":8080",
		"Address the Prometheus metrics endpoint (/metrics) listens on; \"0\" disables it.")
	fs.StringVar(&probeAddr, "health-probe-bind-address", ":8081",
		"Address the liveness (/healthz) and readiness (/readyz) probes listen on.")
	fs.BoolVar(&leaderElect, "leader-elect", false,
		"Elect a leader through a Lease so that only one replica talks to Konnect. Enable when running more than one replica.")
	fs.StringVar(&electionNS, "leader-election-namespace", "",
		"Namespace of the leader election Lease. Default: the namespace the operator runs in (in-cluster).")
	fs.StringVar(&electionID, "leader-election-id", "konnect-operator", "Name of the leader election Lease.")
	fs.DurationVar(&syncPeriod, "sync-period", time.Minute,
		"How long an unchanged object waits before Konnect is brought back to its declared state, so that changes made\n"+
			"in Konnect (e.g. in the UI) are overwritten within one period. Changes in Kubernetes are applied at once.\n"+
			"Shorter periods cost more Konnect API calls.")
	fs.StringVar(&driftMode, "drift-detection", string(konnect.DriftModeList),
		"How out-of-band changes are found once per sync period: \"list\" lists each control plane's entities (a few\n"+
			"paginated calls) and updates only what differs; \"update\" calls update for every object, as the\n"+
			"reconciliation loop's flowchart does literally (one call per object per period).")
	fs.Float64Var(&rateLimit, "konnect-rate-limit", 10,
		"Most Konnect API requests per second sent to one Konnect organization (shared by every auth configuration of\n"+
			"that organization); 0 means unlimited. A 429 answer also pauses the organization for its Retry-After.")
	fs.IntVar(&concurrency, "concurrency", 8, "Objects of one kind reconciled in parallel.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
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
			return nil
		}
		return fmt.Errorf("%w (see --help)", err)
	}
	if syncPeriod <= 0 {
		return fmt.Errorf("--sync-period must be positive, got %s", syncPeriod)
	}
	mode := konnect.DriftMode(driftMode)
	if mode != konnect.DriftModeList && mode != konnect.DriftModeUpdate {
		return fmt.Errorf("--drift-detection must be %q or %q, got %q", konnect.DriftModeList, konnect.DriftModeUpdate, driftMode)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("konnect-operator")

	scheme, err := konnect.NewScheme()
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no cluster to talk to: %w (pass --kubeconfig or set KUBECONFIG)", err)
	}
	// Each Konnect write ends in a status write: client-go's default of 5 requests/s would throttle the operator
	// well below the Konnect rate limit.
	if cfg.QPS < 50 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              electionID,
		LeaderElectionNamespace:       electionNS,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := konnect.Setup(ctx, mgr, konnect.Options{
		SyncPeriod: syncPeriod, DriftMode: mode, RateLimit: rateLimit, MaxConcurrentReconciles: concurrency,
	}); err != nil {
		return fmt.Errorf("setting up the loops: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting", "syncPeriod", syncPeriod.String(), "driftDetection", driftMode, "konnectRateLimit", rateLimit)
	return mgr.Start(ctx)
}
