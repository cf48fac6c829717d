// Command localenv is `make run`: ALM's local environment and its story. It starts a real local cluster (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) with one real node on this machine (containerd, runc,
// kubelet, kube-proxy: test/localnode) and an OCI registry holding the images of bin/images, deploys ALM with
// `kubectl apply -k config/default`, so that ALM and every operator it installs run as pods from their images,
// starts the Konnect simulator, then tells the story (publish bundle and catalog images, install, sync to Konnect,
// upgrade by replaces) and stays up for kubectl until Ctrl-C, which stops everything and puts the machine back.
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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/localnode"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "localenv: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	stateDir, catalog, catalogImage string
	noDemo                          bool
}

func parseFlags(root string) options {
	var o options
	flag.StringVar(&o.stateDir, "state-dir", filepath.Join(root, ".localenv"),
		"Directory for the kubeconfig (kubeconfig), the Konnect URL and token (konnect.env), the registry's host:port (registry),\n"+
			"the catalog last pushed (catalog/catalog.json), and every log; kept after exit.")
	flag.StringVar(&o.catalog, "catalog", "",
		"Also serve the bundles in this directory (<package>/<version>/ bundle directories) through a directory CatalogSource.")
	flag.StringVar(&o.catalogImage, "catalog-image", "",
		"Serve this catalog image (a File-Based Catalog image in any reachable registry) through the image CatalogSource\n"+
			"alm-system/catalog-image instead of telling the story: the environment and that CatalogSource only (the story\n"+
			"publishes into its own catalog and installs the Konnect operator from it). TLS and a 1m poll; ALM runs in a\n"+
			"pod, so a registry on this machine's loopback is out of its reach: name the machine's address. Operators\n"+
			"installed from it run only if the node can pull their images (alm.local/<name>:<version> from the local registry).")
	flag.BoolVar(&o.noDemo, "no-demo", false, "Start the environment and ALM, but do not tell the story.")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `localenv starts ALM's local environment and tells its story (make run):

  - a local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) with one real node on this
    machine, alm-node: containerd and runc, a CNI bridge, kubelet and kube-proxy (root only; one node per machine:
    a second run waits for the first; Ctrl-C puts sysctls, nftables, mounts and cgroups back);
  - an OCI registry holding the images of bin/images (make images) without their alm.local/ host
    (alm.local/alm:0.1.0 is <registry>/alm:0.1.0): HTTPS on the machine's address with a CA of its own (printed,
    and written to <state-dir>/registry), and plain HTTP on loopback as the node's mirror for alm.local;
  - ALM, deployed with kubectl apply -k config/default: a pod from alm.local/alm:0.1.0, as its ServiceAccount, with
    its security context and limits enforced, as every operator it installs;
  - the Konnect API simulator, or real Konnect when KONNECT_TOKEN and KONNECT_SERVER_URL are set;
  - the story: publish the Konnect operator (push its bundle image to <registry>/bundles/konnect-operator:<version>
    and a File-Based Catalog image to <registry>/catalogs/alm:latest, which the image CatalogSource
    alm-system/alm-catalog polls every 5s), install it with an AppType in a namespace the admin trusts, sync Konnect
    objects, undo an edit made in Konnect, let a team install gateway-config in its untrusted namespace team-a through
    its ServiceAccount (spec.serviceAccountName), publish a version with replaces (the next catalog image, same tag)
    and watch the upgrade.

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
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	start := time.Now()
	fmt.Printf("Starting the local cluster with one node, ALM (config/default) and %s...\n", konnectName())
	env, err := localenv.Start(ctx, localenv.Options{
		Root: root, StateDir: o.stateDir,
		KonnectToken: os.Getenv("KONNECT_TOKEN"), KonnectServerURL: os.Getenv("KONNECT_SERVER_URL"),
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping every process...")
		env.Stop()
	}()
	fmt.Printf("[%6.1fs] Node %s is Ready on %s (containerd, runc, kubelet, kube-proxy); it pulls alm.local/* from the registry on %s\n",
		time.Since(start).Seconds(), localnode.NodeName, env.Node.IP, env.Registry.Loopback)
	fmt.Printf("[%6.1fs] ALM is running (Deployment %s/%s, Available)\n", time.Since(start).Seconds(), localenv.ALMNamespace, localenv.ALMDeployment)
	if err := tell(ctx, env, o); err != nil {
		return err
	}
	printReady(env, root, o.catalogImage == "" && !o.noDemo)
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
	if o.catalogImage != "" {
		return serveCatalogImage(ctx, story, o.catalogImage)
	}
	if o.noDemo {
		return nil
	}
	if err := story.Tell(ctx); err != nil {
		return fmt.Errorf("%w\n(pod logs: %s; the cluster's: %s)", err, filepath.Join(localnode.RootDir, "pods"), o.stateDir)
	}
	fmt.Printf("\nThe story took %s.\n", story.Elapsed().Round(100*time.Millisecond))
	return nil
}

// serveCatalogImage creates the image CatalogSource catalog-image on ref and reports what it serves once it has
// been read (or why it cannot be, which it keeps retrying).
func serveCatalogImage(ctx context.Context, story *localenv.Story, ref string) error {
	const name = "catalog-image"
	if err := story.CreateImageCatalog(ctx, name, ref); err != nil {
		return err
	}
	fmt.Printf("Serving the catalog image %s through CatalogSource %s/%s (no story: --catalog-image)\n", ref, localenv.ALMNamespace, name)
	cs := &operatorsv1alpha1.CatalogSource{}
	var ready *metav1.Condition
	_ = localenv.Poll(ctx, 2*time.Minute, func() error {
		if err := story.Env.Client.Get(ctx, types.NamespacedName{Namespace: localenv.ALMNamespace, Name: name}, cs); err != nil {
			return err
		}
		if ready = apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady); ready == nil {
			return fmt.Errorf("not read yet")
		}
		return nil
	})
	switch {
	case ready == nil:
		fmt.Printf("  not read yet; see: kubectl describe catsrc -n %s %s\n", localenv.ALMNamespace, name)
	case ready.Status == metav1.ConditionTrue && cs.Status.Image != nil:
		fmt.Printf("  serves %s: %d package(s), %d bundle(s); see: kubectl get catsrc -n %s -o wide\n",
			cs.Status.Image.Digest, cs.Status.PackageCount, cs.Status.BundleCount, localenv.ALMNamespace)
	default:
		fmt.Printf("  Ready=%s %s: %s (retried on every poll)\n", ready.Status, ready.Reason, ready.Message)
	}
	return nil
}

func printReady(env *localenv.Env, root string, told bool) {
	render := ""
	if told {
		render = fmt.Sprintf("\n  %s catalog render %s/%s:%s --ca-file %s", filepath.Join(root, "bin", "almctl"), env.Registry.Host,
			localenv.CatalogRepository, localenv.CatalogTag, env.Registry.CAFile)
	}
	fmt.Printf(`
The environment is up.

  kubeconfig:     %[1]s
  registry:       %[7]s (HTTPS, CA %[10]s; also in %[8]s)
  Konnect:        %[2]s (URL and token in %[3]s)
  pod logs:       %[4]s (or kubectl logs)
  cluster logs:   %[5]s and node.log beside it

Try:
  export KUBECONFIG=%[1]s
  %[6]s get nodes -o wide
  %[6]s get pods -A
  %[6]s get alm -A
  %[6]s get catsrc -n alm-system -o wide%[9]s
  %[6]s get konnectgatewaycontrolplanes,kongservices,kongroutes,kongconsumers -A

Press Ctrl-C to stop everything.
ready
`, env.Kubeconfig, env.KonnectURL, filepath.Join(env.StateDir, "konnect.env"), filepath.Join(localnode.RootDir, "pods"),
		filepath.Join(env.StateDir, "kube.log"), filepath.Join(root, "bin", "kubectl"), env.Registry.Host,
		filepath.Join(env.StateDir, "registry"), render, env.Registry.CAFile)
}

func konnectName() string {
	if os.Getenv("KONNECT_TOKEN") != "" && os.Getenv("KONNECT_SERVER_URL") != "" {
		return "real Konnect (" + os.Getenv("KONNECT_SERVER_URL") + ")"
	}
	return "the Konnect simulator"
}
