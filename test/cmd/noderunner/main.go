// Command noderunner is the local node runner: it runs the Deployments of a cluster that has no kubelet (the local
// cluster, test/localkube) as host processes, from the images in a directory of docker-save archives, and writes their
// status. See package github.com/almproject/alm/test/noderunner.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/noderunner"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "noderunner: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	imagesDefault, stateDefault := "bin/images", ".localenv/noderunner"
	if root, err := localkube.RepoRoot(); err == nil {
		imagesDefault, stateDefault = filepath.Join(root, imagesDefault), filepath.Join(root, stateDefault)
	}
	// A flag set of our own: controller-runtime registers its own --kubeconfig on the global one.
	fs := flag.NewFlagSet("noderunner", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "Kubeconfig of the cluster (an admin user). Default: $KUBECONFIG.")
	images := fs.String("images", imagesDefault, "Directory of image archives (*.tar, docker-save format, as make images writes them).")
	stateDir := fs.String("state-dir", stateDefault, "Directory for extracted images and pod directories: <state-dir>/pods/<namespace>/<pod>/<container>.log, kubeconfig, serviceaccount/.")
	mirrors := fs.String("registry-mirror", "", "Comma-separated host=endpoint pairs: pull images of registry host (as Deployments name it, e.g. alm.local) from the plain-HTTP registry at endpoint (e.g. 127.0.0.1:5000) when no archive has them.")
	namespaces := fs.String("namespaces", "", "Comma-separated namespaces to run Deployments of. Default: all.")
	maxGrace := fs.Duration("max-grace-period", 5*time.Second, "Cap on a pod's terminationGracePeriodSeconds when stopping it.")
	zapOpts := zap.Options{Development: true}
	zapOpts.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `noderunner plays the kubelet and the deployment controller for a cluster without nodes: every
Deployment whose image is in --images (or on a --registry-mirror) runs as host processes (one per replica and container) with its
ServiceAccount's identity (KUBECONFIG), its containerPorts mapped to free loopback ports (logged as
"pod X port 8081 -> 127.0.0.1:NNNNN"), and its status written as the deployment controller would.
It runs until interrupted, then stops every process.

Usage: noderunner [flags]

Flags:
`)
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if *kubeconfig == "" {
		return fmt.Errorf("no cluster: set --kubeconfig or $KUBECONFIG")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	mirrorMap := map[string]string{}
	for _, pair := range strings.Split(*mirrors, ",") {
		if host, endpoint, ok := strings.Cut(pair, "="); ok && host != "" && endpoint != "" {
			mirrorMap[host] = endpoint
		} else if pair != "" {
			return fmt.Errorf("--registry-mirror: %q is not host=endpoint", pair)
		}
	}
	var nsList []string
	if *namespaces != "" {
		nsList = strings.Split(*namespaces, ",")
	}
	r, err := noderunner.New(noderunner.Options{Config: cfg, ImagesDir: *images, RegistryMirrors: mirrorMap, StateDir: *stateDir,
		Namespaces: nsList, MaxGracePeriod: *maxGrace, Logger: zap.New(zap.UseFlagOptions(&zapOpts))})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return r.Run(ctx)
}
