package noderunner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/noderunner/deploystatus"
	"github.com/almproject/alm/test/noderunner/images"
	"github.com/almproject/alm/test/noderunner/volumes"
)

// podDeps is what a pod needs from the runner.
type podDeps struct {
	admin     *rest.Config
	clientset kubernetes.Interface
	reader    client.Reader
	stateDir  string
	maxGrace  time.Duration
	// maxBackoff caps a container's restart backoff.
	maxBackoff time.Duration
}

// pod is one replica of a Deployment: a process per container, sharing a ServiceAccount identity and port map.
type pod struct {
	info       podInfo
	deployment types.NamespacedName
	hash       string
	dir        string
	ports      map[int32]int32
	spec       corev1.PodSpec
	images     map[string]*images.Image
	log        logr.Logger
	notify     func()

	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	containers  []*container
	startErr    *deploystatus.Problem
	terminating bool
	kubeconfig  string
	volumes     []volumes.Mount // set by prepare, refreshed by syncVolumes
}

// newPod names a pod of d like the deployment controller would (<deployment>-<template hash>-<5 random chars>) and
// maps each declared containerPort to a free loopback port.
func newPod(d *appsv1.Deployment, hash string, imgs map[string]*images.Image, deps podDeps, log logr.Logger, notify func()) (*pod, error) {
	name := d.Name + "-" + hash + "-" + rand.String(5)
	sa := d.Spec.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	p := &pod{
		info: podInfo{Namespace: d.Namespace, Name: name, UID: string(types.UID(rand.String(16))), ServiceAccount: sa,
			Labels: d.Spec.Template.Labels, Annotations: d.Spec.Template.Annotations},
		deployment: client.ObjectKeyFromObject(d),
		hash:       hash,
		dir:        filepath.Join(deps.stateDir, "pods", d.Namespace, name),
		ports:      map[int32]int32{},
		spec:       *d.Spec.Template.Spec.DeepCopy(),
		images:     imgs,
		log:        log.WithValues("pod", d.Namespace+"/"+name),
		notify:     notify,
		done:       make(chan struct{}),
	}
	// The listeners that found the pod's ports stay open until every port is chosen: a port closed at once could be
	// handed out again to the pod's next port, and two of its servers would then fight over one address.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for _, c := range p.spec.Containers {
		for _, cp := range c.Ports {
			if _, ok := p.ports[cp.ContainerPort]; ok {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort(podIP, "0"))
			if err != nil {
				return nil, err
			}
			held = append(held, l)
			hp := int32(l.Addr().(*net.TCPAddr).Port)
			p.ports[cp.ContainerPort] = hp
			p.log.Info(fmt.Sprintf("pod %s port %d -> %s:%d", name, cp.ContainerPort, podIP, hp), "container", c.Name)
		}
	}
	return p, os.MkdirAll(p.dir, 0o700)
}

// start runs the pod in the background until stop.
func (p *pod) start(deps podDeps) {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		p.run(ctx, deps)
		close(p.done)
		// Only now: the reconcile this triggers must find the pod ended (prune), or the Deployment's status keeps
		// counting it as an old replica pending termination, with no later event to correct it.
		p.notify()
	}()
}

// stop asks the pod's processes to end (SIGTERM, then SIGKILL after the grace period); done closes when they have.
func (p *pod) stop() {
	p.mu.Lock()
	already := p.terminating
	p.terminating = true
	p.mu.Unlock()
	if !already {
		p.log.Info("Stopping pod")
		p.cancel()
	}
}

// run prepares the pod (token, kubeconfig, command lines), retrying with backoff, then supervises its containers
// and renews its token until ctx ends.
func (p *pod) run(ctx context.Context, deps podDeps) {
	id, err := newIdentity(deps.clientset, deps.admin, p.dir, p.info.Namespace, p.info.ServiceAccount)
	if err != nil {
		p.setStartErr(err)
		return
	}
	backoff := backoffStart
	var renew time.Duration
	for {
		if renew, err = p.prepare(ctx, id, deps); err == nil {
			break
		}
		p.setStartErr(err)
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, backoffMax)
	}
	var wg sync.WaitGroup
	for _, c := range p.containers {
		wg.Go(func() { c.supervise(ctx) })
	}
	wg.Go(func() { p.syncVolumes(ctx, deps) })
	for sleepCtx(ctx, renew) {
		next, err := id.refresh(ctx)
		if err != nil {
			p.log.Error(err, "Renewing the pod's ServiceAccount token")
			next = 10 * time.Second
		}
		renew = next
	}
	wg.Wait()
	// The token stays valid until it expires: do not leave it behind. The logs stay for inspection.
	_ = os.RemoveAll(filepath.Dir(id.tokenPath()))
	_ = os.Remove(id.kubeconfigPath())
	p.log.Info("Pod stopped")
}

func (p *pod) setStartErr(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	p.log.Error(err, "Preparing the pod")
	p.mu.Lock()
	p.startErr = &deploystatus.Problem{Reason: deploystatus.ReasonCreateContainerError, Message: fmt.Sprintf("pod %s: %v", p.info.Name, err)}
	p.mu.Unlock()
	p.notify()
}

// prepare gets the pod's token and builds each container's process; it returns when to renew the token.
func (p *pod) prepare(ctx context.Context, id *identity, deps podDeps) (time.Duration, error) {
	renew, err := id.refresh(ctx)
	if err != nil {
		return 0, err
	}
	lookup := p.lookup(ctx, deps.reader)
	grace := min(time.Duration(ptrOr(p.spec.TerminationGracePeriodSeconds, 30))*time.Second, deps.maxGrace)
	mounts, err := p.mounts(ctx, deps)
	if err != nil {
		return 0, err
	}
	var containers []*container
	for i := range p.spec.Containers {
		c, err := p.container(&p.spec.Containers[i], id.kubeconfigPath(), lookup, grace, mounts)
		if err != nil {
			return 0, err
		}
		c.maxBackoff = deps.maxBackoff
		containers = append(containers, c)
	}
	p.mu.Lock()
	p.containers, p.startErr, p.kubeconfig = containers, nil, id.kubeconfigPath()
	p.mu.Unlock()
	return renew, nil
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// container builds the process of one container: command line, environment, working directory and log file.
func (p *pod) container(spec *corev1.Container, kubeconfig string, lookup lookupFunc, grace time.Duration, mounts map[string]string) (*container, error) {
	img := p.images[spec.Image]
	extra := map[string]string{"KUBECONFIG": kubeconfig, "HOSTNAME": p.info.Name}
	env, err := containerEnv(img.Config, spec, p.info, lookup, extra)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", spec.Name, err)
	}
	if _, ok := env.lookup("HOME"); !ok {
		env.set("HOME", p.dir)
	}
	if _, ok := env.lookup("TMPDIR"); !ok { // the pod's /tmp, where volumes mounted under /tmp are (see mounts)
		tmp := filepath.Join(p.dir, "tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return nil, err
		}
		env.set("TMPDIR", tmp)
	}
	for _, n := range env.names {
		env.values[n] = volumes.Rewrite(imagePath(img.RootFS, rewritePorts(env.values[n], p.ports)), mounts)
	}
	argv := commandLine(img.Config, spec)
	if len(argv) == 0 {
		return nil, fmt.Errorf("container %s: no command: the image %s has no Entrypoint or Cmd", spec.Name, spec.Image)
	}
	for i := range argv {
		argv[i] = volumes.Rewrite(expand(rewritePorts(argv[i], p.ports), env.lookup), mounts)
	}
	exe, err := p.executable(img, argv[0], env)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", spec.Name, err)
	}
	dir := spec.WorkingDir
	if dir == "" {
		dir = img.Config.WorkingDir
	}
	hostDir, err := images.HostPath(img.RootFS, path.Clean("/"+dir))
	if err != nil {
		return nil, err
	}
	return &container{
		name: spec.Name, exe: exe, argv: argv, env: env.environ(), dir: hostDir,
		logPath: filepath.Join(p.dir, spec.Name+".log"), probe: readinessProber(spec, p.ports), liveness: livenessProber(spec, p.ports), grace: grace,
		log: p.log.WithValues("container", spec.Name), notify: p.notify,
	}, nil
}

// executable finds the entrypoint on the host: an absolute path inside the image, or a name looked up in the
// image's PATH.
func (p *pod) executable(img *images.Image, name string, env *envList) (string, error) {
	candidates := []string{name}
	if !strings.HasPrefix(name, "/") {
		candidates = nil
		pathVar, _ := env.lookup("PATH")
		for _, d := range filepath.SplitList(pathVar) {
			candidates = append(candidates, path.Join(d, name))
		}
	}
	for _, c := range candidates {
		hp, err := images.HostPath(img.RootFS, c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(hp); err == nil && fi.Mode().IsRegular() {
			return hp, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in image %s", name, img.Ref)
}

// lookup reads ConfigMaps and Secrets of the pod's namespace for env and envFrom.
func (p *pod) lookup(ctx context.Context, reader client.Reader) lookupFunc {
	return func(kind, name string) (map[string]string, error) {
		key := types.NamespacedName{Namespace: p.info.Namespace, Name: name}
		if kind == "Secret" {
			s := &corev1.Secret{}
			if err := reader.Get(ctx, key, s); err != nil {
				return nil, err
			}
			out := map[string]string{}
			for k, v := range s.Data {
				out[k] = string(v)
			}
			return out, nil
		}
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		return cm.Data, nil
	}
}

// imagePath maps an env value that is an absolute path of a file or directory inside the image (other than "/"),
// e.g. SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt, to that file on the host; other values are left alone.
func imagePath(rootfs, value string) string {
	if !strings.HasPrefix(value, "/") || value == "/" || strings.ContainsAny(value, ": \t\n") {
		return value
	}
	hp, err := images.HostPath(rootfs, value)
	if err != nil {
		return value
	}
	if _, err := os.Stat(hp); err != nil {
		return value
	}
	return hp
}
