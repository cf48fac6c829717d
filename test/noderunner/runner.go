// Package noderunner is the local node runner: on a control plane without kubelets it plays the kubelet and the
// deployment controller for Deployments whose images it has, running each replica's containers as host processes.
//
// For each Deployment (in all namespaces, or Options.Namespaces) whose container images are in Options.ImagesDir
// (docker-save archives, as `make images` writes them) or can be pulled from Options.RegistryMirrors, the runner
//   - extracts each image once per digest under <state>/images/ and runs its entrypoint from there, with Kubernetes'
//     command/args/$(VAR) rules, the image's and container's env, envFrom, and downward-API fieldRefs
//     (metadata.namespace, metadata.name, status.podIP = 127.0.0.1, spec.nodeName, ...);
//   - gives each pod its ServiceAccount's identity: a TokenRequest token renewed before expiry, written to
//     <pod dir>/serviceaccount/token, and a kubeconfig naming it, passed as KUBECONFIG;
//   - maps each declared containerPort to a free loopback port per pod and rewrites listen addresses in args and env
//     (see rewritePorts), so pods binding the same ports run side by side, and probes the mapped ports;
//   - restarts exited processes with exponential backoff, rolls out a new pod template (new pods ready, then old ones
//     stopped), stops the pods of deleted or scaled-down Deployments, and writes Deployment status as the deployment
//     controller would, with CrashLoopBackOff, ImageNotFound and CreateContainerError reasons when pods fail.
//
// Logs go to <state>/pods/<namespace>/<pod>/<container>.log.
package noderunner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/almproject/alm/internal/outage"
	"github.com/almproject/alm/test/noderunner/images"

	"github.com/almproject/alm/test/noderunner/deploystatus"
)

// Options configures a Runner.
type Options struct {
	// Config is an admin client configuration of the API server; pods get the same server and CA.
	Config *rest.Config
	// ImagesDir holds the image archives (*.tar, docker-save format with RepoTags). Optional when RegistryMirrors
	// is set.
	ImagesDir string
	// RegistryMirrors maps a registry host as Deployments name it (e.g. "alm.local") to a plain-HTTP registry that
	// serves its repositories (host[:port], e.g. "127.0.0.1:5000"), like a container runtime's registry mirror: an
	// image no archive has is pulled from there, "alm.local/konnect-operator:1.0.0" as
	// "127.0.0.1:5000/konnect-operator:1.0.0".
	RegistryMirrors map[string]string
	// StateDir receives extracted images and each pod's directory (logs, token, kubeconfig).
	StateDir string
	// Namespaces limits the runner to these namespaces; empty means all.
	Namespaces []string
	// MaxGracePeriod caps a pod's terminationGracePeriodSeconds. Default 5s.
	MaxGracePeriod time.Duration
	// MaxRestartBackoff caps the wait before an exited container starts again, as a kubelet's
	// crashLoopBackOff.maxContainerRestartPeriod does. Default 30s.
	MaxRestartBackoff time.Duration
	// Logger receives the runner's logs. Default: discarded.
	Logger logr.Logger
	// ServiceSocket, when set, is a Unix socket on which the runner serves kube-apiserver's connections to Services
	// (HTTP CONNECT <cluster IP>:<port>, localkube.Cluster.ServiceSocket) from ready pods on loopback, as kube-proxy
	// would: this is how kube-apiserver calls the webhooks of the operators the runner runs.
	ServiceSocket string
}

// Runner runs Deployments as local processes. Create it with New, then Start; Stop ends every process.
type Runner struct {
	opts   Options
	log    logr.Logger
	images *images.Store
	deps   podDeps
	mgr    ctrl.Manager
	events chan event.GenericEvent

	mu          sync.Mutex
	deployments map[types.NamespacedName][]*pod
	stopped     bool
	cancel      context.CancelFunc
	mgrDone     chan error
	quit        chan struct{}
}

// New checks the options and builds a Runner; nothing runs until Start.
func New(opts Options) (*Runner, error) {
	if opts.Config == nil || opts.StateDir == "" || (opts.ImagesDir == "" && len(opts.RegistryMirrors) == 0) {
		return nil, errors.New("noderunner: Config, StateDir, and ImagesDir or RegistryMirrors are required")
	}
	if opts.MaxGracePeriod <= 0 {
		opts.MaxGracePeriod = 5 * time.Second
	}
	if opts.MaxRestartBackoff <= 0 {
		opts.MaxRestartBackoff = backoffMax
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	// Absolute: a process runs in its image's working directory, so a relative executable path would not resolve.
	for _, dir := range []*string{&opts.StateDir, &opts.ImagesDir} {
		if *dir == "" {
			continue
		}
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return nil, err
		}
		*dir = abs
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	store, err := images.NewStore(images.Options{Dir: opts.ImagesDir, StateDir: opts.StateDir,
		Mirrors: opts.RegistryMirrors, Log: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("noderunner: %w", err)
	}
	r := &Runner{
		opts: opts, log: opts.Logger, images: store,
		events: make(chan event.GenericEvent, 1024), deployments: map[types.NamespacedName][]*pod{},
		quit: make(chan struct{}),
	}
	if err := r.setupManager(); err != nil {
		return nil, err
	}
	r.deps = podDeps{admin: opts.Config, clientset: cs, reader: r.mgr.GetAPIReader(), stateDir: opts.StateDir,
		maxGrace: opts.MaxGracePeriod, maxBackoff: opts.MaxRestartBackoff}
	return r, nil
}

// setupManager builds a controller-runtime manager that caches only Deployments and has no metrics or probes.
func (r *Runner) setupManager() error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	// Its Deployment watch resumes within seconds after kube-apiserver restarts (package outage), not after client-go's
	// reflector backoff of up to a minute: ALM's installs wait for the status it writes, and the chaos scenarios
	// measure ALM, not this stand-in's backoff. A failed reconcile is retried within 10s for the same reason.
	cacheOpts := cache.Options{NewInformer: outage.NewInformer}
	if len(r.opts.Namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range r.opts.Namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(r.opts.Config, ctrl.Options{
		Scheme: scheme, Cache: cacheOpts, Logger: r.log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	r.mgr = mgr
	return ctrl.NewControllerManagedBy(mgr).Named("noderunner").For(&appsv1.Deployment{}).WithOptions(outage.Controller()).
		WatchesRawSource(source.Channel(r.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// Start scans the images and starts watching Deployments; it returns once the watch is synced.
func (r *Runner) Start(ctx context.Context) error {
	if err := r.images.Scan(); err != nil {
		return err
	}
	r.log.Info("Node runner starting", "images", r.images.Refs(), "imagesDir", r.opts.ImagesDir,
		"registryMirrors", r.opts.RegistryMirrors, "stateDir", r.opts.StateDir)
	mctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.cancel, r.mgrDone = cancel, make(chan error, 1)
	r.mu.Unlock()
	if r.opts.ServiceSocket != "" {
		if err := r.serveServices(mctx, r.opts.ServiceSocket); err != nil {
			cancel()
			return err
		}
	}
	go func() { r.mgrDone <- r.mgr.Start(mctx) }()
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
	defer cancelSync()
	if !r.mgr.GetCache().WaitForCacheSync(syncCtx) {
		_ = r.Stop()
		return errors.New("noderunner: the Deployment watch did not sync")
	}
	return nil
}

// Run starts the runner, blocks until ctx ends and stops it.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return r.Stop()
}

// Stop stops watching and ends every process of every pod (SIGTERM, then SIGKILL after the grace period). It
// returns when no process is left; it is safe to call more than once.
func (r *Runner) Stop() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	close(r.quit)
	cancel, done := r.cancel, r.mgrDone
	r.mu.Unlock()
	var err error
	if cancel != nil {
		cancel()
		err = <-done
	}
	r.mu.Lock()
	var all []*pod
	for _, pods := range r.deployments {
		all = append(all, pods...)
	}
	r.mu.Unlock()
	for _, p := range all {
		p.stop()
	}
	for _, p := range all {
		<-p.done
	}
	r.log.Info("Node runner stopped", "pods", len(all))
	return err
}

// Images lists the image references the runner has.
func (r *Runner) Images() []string {
	_ = r.images.Scan()
	return r.images.Refs()
}

// notifier returns a function that has the Deployment key reconciled again.
func (r *Runner) notifier(key types.NamespacedName) func() {
	return func() {
		d := &appsv1.Deployment{}
		d.Namespace, d.Name = key.Namespace, key.Name
		select {
		case r.events <- event.GenericEvent{Object: d}:
		case <-r.quit:
		}
	}
}

// PodInfo is a snapshot of one local pod.
type PodInfo struct {
	// Namespace and Name identify the pod (<deployment>-<template hash>-<random>); no Pod object exists.
	Namespace, Name string
	// Deployment is the name of the Deployment it belongs to.
	Deployment string
	// TemplateHash is the hash of the pod template it runs.
	TemplateHash string
	// Terminating says its processes are being stopped.
	Terminating bool
	// Dir is the pod's directory: logs, kubeconfig, serviceaccount/.
	Dir string
	// Kubeconfig is the file passed as KUBECONFIG, empty until the pod is prepared.
	Kubeconfig string
	// Ports maps each declared containerPort to its loopback host port.
	Ports map[int32]int32
	// Containers are the pod's containers, once prepared.
	Containers []ContainerInfo
}

// Pods returns a snapshot of the runner's pods, sorted by namespace and name.
func (r *Runner) Pods() []PodInfo {
	r.mu.Lock()
	var all []*pod
	for _, pods := range r.deployments {
		all = append(all, pods...)
	}
	r.mu.Unlock()
	out := make([]PodInfo, 0, len(all))
	for _, p := range all {
		out = append(out, p.snapshot())
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

func (p *pod) snapshot() PodInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	pi := PodInfo{Namespace: p.info.Namespace, Name: p.info.Name, Deployment: p.deployment.Name, TemplateHash: p.hash,
		Terminating: p.terminating, Dir: p.dir, Kubeconfig: p.kubeconfig, Ports: map[int32]int32{}}
	for k, v := range p.ports {
		pi.Ports[k] = v
	}
	for _, c := range p.containers {
		pi.Containers = append(pi.Containers, c.info())
	}
	return pi
}

// state is what the Deployment's status needs to know of the pod.
func (p *pod) state() deploystatus.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := deploystatus.Pod{Hash: p.hash, Terminating: p.terminating, Problem: p.startErr}
	select {
	case <-p.done:
		st.Terminating = true
	default:
	}
	st.Ready = len(p.containers) > 0 && p.startErr == nil
	for _, c := range p.containers {
		ci := c.info()
		c.mu.Lock()
		since := c.readySince
		c.mu.Unlock()
		st.Ready = st.Ready && ci.Ready
		st.ReadySince = maxTime(st.ReadySince, since)
		if st.Problem == nil {
			st.Problem = c.problem()
		}
	}
	return st
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// imageProblem says which images of d are missing, listing those the runner has, and why each that could not be
// pulled from a registry mirror could not.
func imageProblem(missing []*images.NotFoundError, have []string) *deploystatus.Problem {
	refs := make([]string, 0, len(missing))
	var causes []string
	for _, nf := range missing {
		refs = append(refs, nf.Ref)
		if nf.Cause != nil {
			causes = append(causes, fmt.Sprintf("%s: %v", nf.Ref, nf.Cause))
		}
	}
	msg := fmt.Sprintf("image %v not found in the local node runner's images; it has %v", refs, have)
	if len(causes) > 0 {
		msg += "; " + strings.Join(causes, "; ")
	}
	return &deploystatus.Problem{Reason: deploystatus.ReasonImageNotFound, Message: msg}
}
