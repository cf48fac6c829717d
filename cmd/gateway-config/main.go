// Command gateway-config is a small operator that needs the Konnect operator's KongService kind: it writes the
// ConfigMap gateway-config-summary in the namespace it watches, listing every KongService there. Its bundle
// (bundles/gateway-config) requires kongservices.configuration.konghq.com, so installing it through ALM installs the
// Konnect operator too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "gateway-config: %v\n", err)
		os.Exit(1)
	}
}

// options are the command line flags.
type options struct {
	probeAddr, metricsAddr, namespace string
	zap                               zap.Options
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("gateway-config", flag.ContinueOnError)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8091",
		"Address the liveness (/healthz) and readiness (/readyz) probes listen on.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"Address the Prometheus metrics endpoint (/metrics) listens on; \"0\" disables it.")
	fs.StringVar(&o.namespace, "watch-namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace whose KongServices are summarized and where the ConfigMap "+SummaryName+" is written.\n"+
			"Default: $POD_NAMESPACE (the namespace the operator runs in).")
	o.zap.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `gateway-config (version %s) writes the ConfigMap %s in one namespace, listing every
KongService (configuration.konghq.com/v1alpha1) there: its host, port and whether Konnect has it (Programmed).
It needs the KongService CRD, which the Konnect operator's bundle provides.

It uses the cluster in --kubeconfig, else $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config.

Usage: gateway-config [flags]

Flags:
`, version, SummaryName)
		fs.PrintDefaults()
	}
	if kf := flag.CommandLine.Lookup("kubeconfig"); kf != nil {
		fs.Var(kf.Value, kf.Name, "Path to a kubeconfig. Only required when running outside a cluster.")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.namespace == "" {
		return nil, errors.New("--watch-namespace: required (or set POD_NAMESPACE)")
	}
	return o, nil
}

// run runs the operator until ctx is done.
func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := configurationv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no cluster to talk to: %w (pass --kubeconfig or set KUBECONFIG)", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.probeAddr,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.namespace: {}},
			ByObject: map[client.Object]cache.ByObject{
				&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", SummaryName)},
			},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	r := &summaryReconciler{Client: mgr.GetClient(), namespace: o.namespace}
	if err := r.setupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the summary loop: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.WithName("gateway-config").Info("Starting", "version", version, "namespace", o.namespace)
	return mgr.Start(ctx)
}
