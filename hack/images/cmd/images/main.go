// Command images builds ALM's container image archives without Docker (`make images`) and pushes them
// (`make push`). See package github.com/almproject/alm/hack/images for the archive contract.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"

	"github.com/almproject/alm/hack/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "images: %v\n", err)
		}
		os.Exit(2)
	}
}

const usage = `images builds and pushes ALM's container images with go-containerregistry (no Docker needed).

Usage:
  images build [--root DIR] [--out DIR] [--alm-version V] [--goarch ARCH]
      Build every image (alm, and each version in hack/bundles/*.yaml) into OUT/<name>-<version>.tar
      (docker-save format; docker load, kind load image-archive). Prints: path tag digest.
  images push --registry HOST[/PATH] [--dir DIR] [--insecure]
      Push every archive in DIR retagged under the registry (docker config credentials). Prints: ref digest.
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "build" && args[0] != "push") {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("images "+args[0], flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	if args[0] == "push" {
		registry := fs.String("registry", "", "Registry (host[:port][/path]) to push to. Required.")
		dir := fs.String("dir", "bin/images", "Directory of the archives.")
		insecure := fs.Bool("insecure", false, "Use plain HTTP.")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *registry == "" {
			return errors.New("push: --registry is required (e.g. make push REGISTRY=host:5000/team)")
		}
		pushed, err := images.PushArchives(ctx, *dir, *registry, *insecure)
		for _, p := range pushed {
			fmt.Printf("%s %s\n", p.Ref, p.Digest)
		}
		return err
	}
	root := fs.String("root", ".", "Repository root.")
	out := fs.String("out", "bin/images", "Directory the archives are written to.")
	almVersion := fs.String("alm-version", "0.1.0", "Version (tag) of the alm image.")
	goarch := fs.String("goarch", "", "GOARCH of the binaries and images. Default: the host's.")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	return build(ctx, *root, *out, *almVersion, *goarch)
}

func build(ctx context.Context, root, out, almVersion, goarch string) error {
	targets, err := images.Plan(root, almVersion)
	if err != nil {
		return err
	}
	created, err := images.CreatedFromEnv()
	if err != nil {
		return err
	}
	opts := images.Options{Root: root, OutDir: out, GOARCH: goarch, Revision: images.GitRevision(ctx, root), Created: created}
	// One build per core at once: linking a binary and compressing its layer each use about one core.
	results, errs := make([]images.Result, len(targets)), make([]error, len(targets))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			results[i], errs[i] = images.Build(ctx, t, opts)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, res := range results {
		fmt.Printf("%s %s %s\n", res.Path, res.Tag, res.Digest)
	}
	return nil
}
