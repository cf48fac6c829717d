// Command alm is the ALM manager: it runs ALM's reconciliation loops (catalog loops and lifecycle loops) in one
// process. --loops runs a subset, so the catalog loops and the lifecycle loops can run as two deployments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/catalogsource"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/loops"
	"github.com/almproject/alm/controllers/metrics"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/lazylog"
	"github.com/almproject/alm/internal/metricsendpoint"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "alm: %v\n", err)
		os.Exit(1)
	}
}

// gcPercent is the GOGC ALM runs with unless the environment sets one.
const gcPercent = 30

type options struct {
	metrics                 metricsendpoint.Options
	probeAddr               string
	pprofAddr               string
	leaderElect             bool
	leaderElectionNamespace string
	leaderElectionID        string
	loops                   string
	loopOptions             loops.Options
	qps                     float64
	burst                   int
	maxConcurrentReconciles int
	bundleCacheDir          string
	bundleCacheSize         int
	bundleCacheBytes        quantity
	catalogScratchDir       string
	catalogScratchBytes     quantity
}

// quantity is a flag of a byte count, written as a Kubernetes quantity (e.g. 1Gi, 512Mi, 1000000).
type quantity struct{ resource.Quantity }

func (q *quantity) Set(s string) error {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if v.Sign() <= 0 {
		return fmt.Errorf("%s is not a positive number of bytes", s)
	}
	q.Quantity = v
	return nil
}

func (q *quantity) String() string {
	if q == nil {
		return ""
	}
	return q.Quantity.String()
}

func mustQuantity(s string) quantity { return quantity{resource.MustParse(s)} }

func run(args []string) error {
	o, zapOpts, err := parseFlags(args)
	if err != nil || o == nil {
		return err // nil with nil options: --help
	}
	selected, err := loops.Select(o.loops)
	if err != nil {
		return err
	}
	o.loopOptions.VersionFinalizers = loops.VersionFinalizers(selected)
	// Values a reconcile's logger carries are encoded only for a line it writes (package lazylog).
	ctrl.SetLogger(lazylog.New(zap.New(zap.UseFlagOptions(zapOpts))))
	if os.Getenv("GOGC") == "" {
		// Collect garbage when the heap has grown by 30% since the last collection (Go's default: doubled). A burst
		// of installs allocates fast (copies from the cache, plans, JSON), so at the default the peak resident memory
		// is about three times what ALM holds (BenchmarkScale). The price is more CPU for the collector: the
		// upgrade-cpu-s-alm row of BenchmarkScale says how much.
		debug.SetGCPercent(gcPercent)
	}
	log := ctrl.Log.WithName("alm")
	if limit, source := setMemoryLimit(); limit > 0 {
		log.Info("Go memory limit set from the container's memory limit", "goMemLimitBytes", limit, "source", source)
	}
	if o.metrics.Open() {
		log.Info("WARNING: /metrics is served over plain HTTP to anyone who reaches it (--metrics-secure=false): "+
			"it lists every namespace, package and version ALM manages", "metricsBindAddress", o.metrics.BindAddress)
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := newManager(ctx, o, log)
	if err != nil {
		return err
	}
	if o.loopOptions.Events, err = loops.NewEvents(mgr); err != nil {
		return err
	}
	for _, l := range selected {
		if err := l.Setup(mgr, o.loopOptions); err != nil {
			return fmt.Errorf("setting up loop %s: %w", l.Name, err)
		}
		log.Info("Loop enabled", "loop", l.Name, "group", l.Group)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting manager", "loops", loops.Names(selected))
	return mgr.Start(ctx)
}

const usage = `alm runs ALM, the App Lifecycle Manager: it installs operators from catalogs of OLM registry+v1 bundles
when an AppType asks for them, and upgrades them when a catalog publishes a version whose replaces names an
installed one.

It uses the cluster in --kubeconfig, else $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config.

Usage: alm [flags]

Flags:
`

// parseFlags parses the command line. It returns nil options (and no error) when --help printed the usage.
func parseFlags(args []string) (*options, *zap.Options, error) {
	fs := flag.NewFlagSet("alm", flag.ContinueOnError)
	o := &options{}
	o.metrics.BindFlags(fs, "alm-metrics-reader")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"Address the liveness (/healthz) and readiness (/readyz) probes listen on.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"Address Go's profiles (/debug/pprof/) listen on, e.g. 127.0.0.1:8082; \"0\" (the default) disables them.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader through a Lease so that only one replica reconciles at a time. Enable when running more than one replica.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease. Default: $POD_NAMESPACE, else the namespace ALM runs in (in-cluster), else kube-system.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "",
		"Name of the leader election Lease. Default: alm-<loops>, so managers running different loop sets do not block each other.")
	fs.StringVar(&o.loops, "loops", "all", loops.Usage())
	fs.DurationVar(&o.loopOptions.InstallTimeout, "install-timeout", install.DefaultTimeout,
		"How long an OperatorVersion may wait for its required CRDs and for its Deployments to become available before it is marked Failed.")
	fs.StringVar(&o.loopOptions.Namespace, "namespace", "",
		"ALM's own namespace: its CatalogSources serve AppTypes in every namespace. Default: $POD_NAMESPACE, else the namespace ALM runs in (in-cluster), else alm-system.")
	fs.BoolVar(&o.loopOptions.TrustAllNamespaces, "trust-all-namespaces", false,
		"Install AppTypes that name no ServiceAccount (spec.serviceAccountName) with ALM's own permissions in every namespace, "+
			"for a cluster whose only tenants are its admins. Default: only in ALM's namespace and in namespaces a cluster admin labelled "+
			"operators.alm.dev/trusted-installs=true (only those may also use image registries on loopback); elsewhere such an install is "+
			"refused with a condition that says how to proceed. Installs that name a ServiceAccount are always checked against it.")
	fs.DurationVar(&o.loopOptions.CatalogResync, "catalog-resync", catalogsource.DefaultResync,
		"How often directory CatalogSources are read again (ConfigMap CatalogSources are watched and apply at once).")
	o.bindCatalogFlags(fs)
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", loops.DefaultMaxConcurrentReconciles,
		"How many objects each loop reconciles at once (e.g. how many OperatorVersions install in parallel). "+
			"Raise it when many installs start together and the API server has room; no object is reconciled by two workers of a loop at once.")
	fs.Float64Var(&o.qps, "kube-api-qps", 100,
		"Requests per second ALM may make to the API server (client-side limit). Installing reads what it applies from a cache.")
	fs.IntVar(&o.burst, "kube-api-burst", 200, "Burst allowed above --kube-api-qps.")
	zapOpts := &zap.Options{}
	zapOpts.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	// controller-runtime registers --kubeconfig on the global flag set; expose it here as well.
	if kf := flag.CommandLine.Lookup("kubeconfig"); kf != nil {
		fs.Var(kf.Value, kf.Name, "Path to a kubeconfig. Only required when running outside a cluster.")
	}
	// A bad flag is one line in the log, not the whole usage; --help prints the usage.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("%w (see --help)", err)
	}
	if root := o.loopOptions.DirectoryCatalogRoot; root != "" && !filepath.IsAbs(root) {
		return nil, nil, fmt.Errorf("--directory-catalog-root %q is not an absolute path (see --help)", root)
	}
	if o.bundleCacheSize < 1 {
		return nil, nil, fmt.Errorf("--bundle-cache-size is %d; it must be at least 1 (see --help)", o.bundleCacheSize)
	}
	if o.maxConcurrentReconciles < 1 {
		return nil, nil, fmt.Errorf("--max-concurrent-reconciles is %d; it must be at least 1 (see --help)", o.maxConcurrentReconciles)
	}
	if err := o.metrics.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w (see --help)", err)
	}
	return o, zapOpts, nil
}

// bindCatalogFlags binds the flags of where catalogs come from on ALM's filesystem and how much disk they may use.
func (o *options) bindCatalogFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.loopOptions.DirectoryCatalogRoot, "directory-catalog-root", "",
		"Absolute directory of ALM's filesystem under which directory CatalogSources (spec.directory.path) of every namespace may serve bundles, "+
			"symlinks and \"..\" resolved. Default: none, so only CatalogSources in ALM's namespace (--namespace) may serve a directory. "+
			"No CatalogSource may serve --bundle-cache-dir, --catalog-scratch-dir or a directory that holds them.")
	fs.StringVar(&o.bundleCacheDir, "bundle-cache-dir", filepath.Join(os.TempDir(), "alm-bundles"),
		"Directory where bundle images are unpacked, by digest, before they are verified and installed (shared by the install, upgrade and requirements loops). "+
			"Anything in it may be removed; give it its own volume (e.g. an emptyDir).")
	fs.IntVar(&o.bundleCacheSize, "bundle-cache-size", 64,
		"How many unpacked bundle images --bundle-cache-dir keeps; the least recently used beyond that are removed.")
	o.bundleCacheBytes = mustQuantity("1Gi")
	fs.Var(&o.bundleCacheBytes, "bundle-cache-bytes",
		"How many bytes of unpacked bundle images --bundle-cache-dir keeps (a quantity: 1Gi, 512Mi); the least recently used beyond that are removed. "+
			"Pulls in progress add up to 64Mi each. With --catalog-scratch-bytes it must fit the volume of the two directories (config/manager: a 4Gi emptyDir at /tmp).")
	fs.StringVar(&o.catalogScratchDir, "catalog-scratch-dir", filepath.Join(os.TempDir(), "alm-catalogs"),
		"Directory where catalog images are extracted, file by file, to be parsed; each catalog's files are removed once parsed, and what a stopped ALM left "+
			"is removed at start. Give it its own volume (e.g. an emptyDir).")
	o.catalogScratchBytes = mustQuantity("2Gi")
	fs.Var(&o.catalogScratchBytes, "catalog-scratch-bytes",
		"How many bytes the catalog images being extracted may hold in --catalog-scratch-dir together (a quantity). A pull that would pass it stops and is tried again a minute later. "+
			"One catalog image may hold up to 2Gi of files; below that, the largest catalogs never load.")
}

// newManager creates the manager for the cluster in the kubeconfig, filling in the defaults of o that depend on
// where ALM runs.
func newManager(ctx context.Context, o *options, log logr.Logger) (ctrl.Manager, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to talk to: %w (pass --kubeconfig or set KUBECONFIG)", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	if o.loopOptions.Namespace == "" {
		o.loopOptions.Namespace = defaultNamespace("alm-system")
	}
	if o.leaderElect && o.leaderElectionNamespace == "" {
		o.leaderElectionNamespace = defaultNamespace("kube-system")
	}
	o.loopOptions.Registry = registry.New()
	// One bundle cache and one image client per CatalogSource, shared by every loop that pulls bundle images.
	o.loopOptions.Bundles = loops.NewBundles(&image.BundleCache{Dir: o.bundleCacheDir, MaxEntries: o.bundleCacheSize,
		MaxBytes: o.bundleCacheBytes.Value()}, o.loopOptions.Namespace)
	// Catalog images are extracted to disk (shared by every image CatalogSource) and parsed file by file.
	if err := image.RemoveScratch(o.catalogScratchDir); err != nil {
		return nil, fmt.Errorf("--catalog-scratch-dir %s: %w", o.catalogScratchDir, err)
	}
	o.loopOptions.Bundles.Clients.ScratchDir = o.catalogScratchDir
	o.loopOptions.Bundles.Clients.Space = &image.Space{MaxBytes: o.catalogScratchBytes.Value()}
	electionID := o.leaderElectionID
	if electionID == "" {
		electionID = "alm-" + strings.ReplaceAll(o.loops, ",", "-")
	}
	if err := waitForAPIServer(ctx, cfg, log); err != nil {
		return nil, err
	}
	var lock resourcelock.Interface
	if o.leaderElect {
		if lock, err = leaderLock(cfg, o.leaderElectionNamespace, electionID); err != nil {
			return nil, fmt.Errorf("the leader election Lease: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 o.metrics.Server(),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        electionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// The Lease's holder is the pod (leaderIdentity): ALM restarted in its pod takes over at once.
		LeaderElectionResourceLockInterface: lock,
		// Our loops are idempotent; releasing on cancel lets a restarted manager take over at once.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{MaxConcurrentReconciles: o.maxConcurrentReconciles},
		Cache:                         loops.CacheOptions(),
		Client:                        loops.ClientOptions(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	// The metrics endpoint reports every OperatorVersion and CatalogSource in the cache (controllers/metrics).
	metrics.Watch(mgr.GetCache())
	return mgr, nil
}

// newScheme registers the kinds ALM reads and writes.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		operatorsv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// defaultNamespace is the namespace ALM runs in: $POD_NAMESPACE (set from the downward API by config/manager), else
// the in-cluster ServiceAccount's, else fallback.
func defaultNamespace(fallback string) string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if ns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(ns) > 0 {
		return strings.TrimSpace(string(ns))
	}
	return fallback
}
