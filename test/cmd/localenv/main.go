// Command localenv is `make run`: ALM's local environment and its story. It starts a real local cluster (etcd,
// kube-apiserver, kube-controller-manager with the garbage collector), deploys ALM from config/default, runs it and
// every operator it installs as processes through the local node runner, starts the Konnect simulator, then tells
// the story (publish, install, sync to Konnect, upgrade by replaces) and stays up for kubectl until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "localenv: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	stateDir, catalog string
	noDemo, verbose   bool
}

func parseFlags(root string) options {
	var o options
	flag.StringVar(&o.stateDir, "state-dir", filepath.Join(root, ".localenv"),
		"Directory for the kubeconfig (kubeconfig), the Konnect URL and token (konnect.env), and every log; kept after exit.")
	flag.StringVar(&o.catalog, "catalog", "",
		"Also serve the bundles in this directory (<package>/<version>/ bundle directories) through a directory CatalogSource.")
	flag.BoolVar(&o.noDemo, "no-demo", false, "Start the environment and ALM, but do not tell the story.")
	flag.BoolVar(&o.verbose, "v", false, "Print the node runner's logs.")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `localenv starts ALM's local environment and tells its story (make run):

  - a local cluster (etcd, kube-apiserver, kube-controller-manager with the garbage collector);
  - ALM, deployed with config/default and run from its image (make images) by the local node runner, which
    plays the kubelet: every Deployment whose image is in bin/images runs as a process with its ServiceAccount's
    identity;
  - the Konnect API simulator, or real Konnect when KONNECT_TOKEN and KONNECT_SERVER_URL are set;
  - the story: publish the Konnect operator, install it with an AppType, sync Konnect objects, undo an edit made
    in Konnect, publish a version with replaces and watch the upgrade.

Then it stays up for kubectl (the kubeconfig is <state-dir>/kubeconfig) and prints a line "ready"; Ctrl-C stops
everything and leaves no process behind.

Usage: localenv [flags]   (make run ARGS='...')

Flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	return o
}

func run() error {
	root, err := localkube.RepoRoot()
	if err != nil {
		return err
	}
	o := parseFlags(root)
	if o.stateDir, err = filepath.Abs(o.stateDir); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := logr.Discard()
	if o.verbose {
		log = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	}
	ctrllog.SetLogger(log) // the node runner runs controller-runtime in this process
	start := time.Now()
	fmt.Printf("Starting the local cluster, the node runner, ALM (config/default) and %s...\n", konnectName())
	env, err := localenv.Start(ctx, localenv.Options{
		Root: root, StateDir: o.stateDir, Logger: log,
		KonnectToken: os.Getenv("KONNECT_TOKEN"), KonnectServerURL: os.Getenv("KONNECT_SERVER_URL"),
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping every process...")
		env.Stop()
	}()
	fmt.Printf("[%6.1fs] ALM is running (Deployment %s/%s, Available)\n", time.Since(start).Seconds(), localenv.ALMNamespace, localenv.ALMDeployment)
	if err := tell(ctx, env, o); err != nil {
		return err
	}
	printReady(env, root)
	<-ctx.Done()
	return nil
}

func tell(ctx context.Context, env *localenv.Env, o options) error {
	story := localenv.NewStory(env, os.Stdout)
	if o.catalog != "" {
		dir, err := filepath.Abs(o.catalog)
		if err != nil {
			return err
		}
		if err := story.CreateDirectoryCatalog(ctx, "local", dir); err != nil {
			return err
		}
		fmt.Printf("Serving the bundles in %s through CatalogSource %s/local\n", dir, localenv.ALMNamespace)
	}
	if o.noDemo {
		return nil
	}
	if err := story.Tell(ctx); err != nil {
		return fmt.Errorf("%w\n(logs: %s)", err, filepath.Join(o.stateDir, "noderunner", "pods"))
	}
	fmt.Printf("\nThe story took %s.\n", story.Elapsed().Round(100*time.Millisecond))
	return nil
}

func printReady(env *localenv.Env, root string) {
	fmt.Printf(`
The environment is up.

  kubeconfig:     %[1]s
  Konnect:        %[2]s (URL and token in %[3]s)
  process logs:   %[4]s
  cluster logs:   %[5]s

Try:
  export KUBECONFIG=%[1]s
  %[6]s get alm -A
  %[6]s get konnectgatewaycontrolplanes,kongservices,kongroutes,kongconsumers -A

Press Ctrl-C to stop everything.
ready
`, env.Kubeconfig, env.KonnectURL, filepath.Join(env.StateDir, "konnect.env"), filepath.Join(env.StateDir, "noderunner", "pods"),
		filepath.Join(env.StateDir, "kube.log"), filepath.Join(root, "bin", "kubectl"))
}

func konnectName() string {
	if os.Getenv("KONNECT_TOKEN") != "" && os.Getenv("KONNECT_SERVER_URL") != "" {
		return "real Konnect (" + os.Getenv("KONNECT_SERVER_URL") + ")"
	}
	return "the Konnect simulator"
}
