// Package localenv is ALM's local environment, what `make run` starts and the end-to-end tests use: a local cluster
// with one real node (test/localkube, test/localnode), an OCI registry holding the images `make images` built (the
// node's mirror for alm.local), ALM deployed from config/default and running in a container as its ServiceAccount, and
// the Konnect API simulator (or real Konnect). Story tells ALM's story on it, step by step, publishing bundles as
// bundle images and a catalog image to the registry, as on a real cluster.
package localenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	hackimages "github.com/almproject/alm/hack/images"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localkube"
	"github.com/almproject/alm/test/localnode"
)

// ALMNamespace and ALMDeployment are where config/default deploys ALM.
const (
	ALMNamespace  = "alm-system"
	ALMDeployment = "alm-manager"
)

// Options configure Start.
type Options struct {
	// Root is the repository root: config/default, bin/ (kubectl, almctl, images/) and bundles/ are read from it.
	Root string
	// StateDir holds the kubeconfig, konnect.env, registry (the registry's host:port), the catalog last pushed, and
	// the cluster's and the node's logs (kube.log, node.log). Pod logs are where the kubelet writes them
	// (localnode.RootDir/pods) and `kubectl logs` reads them.
	StateDir string
	// KonnectToken and KonnectServerURL select real Konnect; when either is empty the simulator runs instead.
	KonnectToken, KonnectServerURL string
	// APIServerFlags are extra kube-apiserver flags (localkube.Options.APIServerFlags), e.g. an audit log.
	APIServerFlags map[string]string
	// NoALM leaves ALM out: the cluster, its node, the registry and the simulator only, for tests that run ALM's
	// loops in the test process (harness.StartManager) against operators running on the real node.
	NoALM bool
	// MaxRestartBackoff caps the kubelet's crash-loop backoff (localnode.Options.MaxContainerRestartPeriod).
	MaxRestartBackoff time.Duration
	// Status receives a line when the node has to wait for another run's node (one per machine). Default: stderr.
	Status io.Writer
}

// Env is a running local environment.
type Env struct {
	Root, StateDir string
	// Kubeconfig is an admin kubeconfig for kubectl, almctl and the tests.
	Kubeconfig string
	CP         *localkube.Cluster
	Client     client.Client
	// Node is the cluster's one node, on the machine's address.
	Node *localnode.Node
	// Registry serves the images of bin/images and what the story publishes.
	Registry *Registry
	// Sim is the Konnect simulator; nil with real Konnect.
	Sim *konnectsim.Server
	// KonnectURL and KonnectToken are what a KonnectAPIAuthConfiguration uses.
	KonnectURL, KonnectToken string

	logFile, nodeLog *os.File

	metricsMu      sync.Mutex
	metricsToken   string
	metricsTokenAt time.Time
}

// Start brings the environment up and returns once ALM is Available (unless Options.NoALM). On error, everything
// started is stopped.
func Start(ctx context.Context, o Options) (_ *Env, err error) {
	e := &Env{Root: o.Root, StateDir: o.StateDir}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	ip, err := localnode.HostIP()
	if err != nil {
		return nil, err
	}
	if err := e.startControlPlane(ip, o.APIServerFlags); err != nil {
		return nil, err
	}
	if err := e.startKonnect(ip, o); err != nil {
		return nil, err
	}
	if err := e.startRegistry(ctx, ip); err != nil {
		return nil, err
	}
	if err := e.startNode(ctx, o); err != nil {
		return nil, err
	}
	if o.NoALM {
		return e, nil
	}
	if _, err := e.Kubectl(ctx, "apply", "-k", e.Path("config", "default")); err != nil {
		return nil, fmt.Errorf("deploying ALM from config/default: %w", err)
	}
	if err := e.WaitDeploymentAvailable(ctx, ALMNamespace, ALMDeployment, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("ALM did not become available (kubectl -n %s describe pods; kubectl -n %s logs deploy/%s): %w",
			ALMNamespace, ALMNamespace, ALMDeployment, err)
	}
	return e, nil
}

// startNode starts the node: containerd pulls alm.local/<name>:<version> from the registry's loopback address (its
// mirror), so every image that runs went through the registry, as on a cluster with a registry mirror.
func (e *Env) startNode(ctx context.Context, o Options) error {
	f, err := os.Create(filepath.Join(e.StateDir, "node.log"))
	if err != nil {
		return err
	}
	e.nodeLog = f
	e.Node, err = localnode.Start(ctx, localnode.Options{
		Cluster: e.CP, Output: f, Status: o.Status, SandboxImage: hackimages.PauseImage, MaxContainerRestartPeriod: o.MaxRestartBackoff,
		Mirrors: map[string]localnode.Mirror{ImageHost: {URL: "http://" + e.Registry.Loopback}},
	})
	if err != nil {
		return fmt.Errorf("starting the node (its log: %s): %w", f.Name(), err)
	}
	return nil
}

// startRegistry starts the registry, pushes the image archives of bin/images to it and writes its host:port to
// <state>/registry.
func (e *Env) startRegistry(ctx context.Context, ip string) error {
	reg, err := StartRegistry(ip, filepath.Join(e.StateDir, "registry-pki"))
	if err != nil {
		return err
	}
	e.Registry = reg
	if _, err := reg.PushArchives(ctx, e.Path("bin", "images")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.StateDir, "registry"), []byte(reg.Host+"\n"), 0o644)
}

// startControlPlane starts a cluster for a node on ip (with no ip: a cluster without a node).
func (e *Env) startControlPlane(ip string, apiserverFlags map[string]string) error {
	if err := os.MkdirAll(e.StateDir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(e.StateDir, "kube.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	e.logFile = f
	opts := localkube.Options{Output: f, APIServerFlags: apiserverFlags}
	if ip != "" {
		opts.Node = &localkube.NodeOptions{IP: ip}
	}
	cp, err := localkube.Start(opts)
	if err != nil {
		return fmt.Errorf("%w (cluster logs: %s)", err, logPath)
	}
	e.CP = cp
	data, err := os.ReadFile(cp.KubeconfigPath)
	if err != nil {
		return err
	}
	e.Kubeconfig = filepath.Join(e.StateDir, "kubeconfig")
	if err := os.WriteFile(e.Kubeconfig, data, 0o600); err != nil {
		return err
	}
	e.Client, err = client.New(cp.Config, client.Options{Scheme: Scheme()})
	return err
}

// startKonnect starts the simulator on ip, where the Konnect operator's pods reach it, with a random token (so that
// a token found in a log is surely a leak), or takes real Konnect's, and writes both to konnect.env for scripts.
func (e *Env) startKonnect(ip string, o Options) error {
	if o.KonnectToken != "" && o.KonnectServerURL != "" {
		e.KonnectURL, e.KonnectToken = o.KonnectServerURL, o.KonnectToken
	} else {
		buf := make([]byte, 16)
		if _, err := rand.Read(buf); err != nil {
			return err
		}
		e.KonnectToken = "kpat_local_" + hex.EncodeToString(buf)
		e.Sim = konnectsim.New(konnectsim.Options{
			Organizations: []konnectsim.Organization{{Name: "local", Tokens: []string{e.KonnectToken}}}, ListenOn: ip,
		})
		if err := e.Sim.StartOn(net.JoinHostPort(ip, "0")); err != nil {
			return fmt.Errorf("starting the Konnect simulator: %w", err)
		}
		e.KonnectURL = e.Sim.URL()
	}
	env := fmt.Sprintf("KONNECT_SERVER_URL=%s\nKONNECT_TOKEN=%s\n", e.KonnectURL, e.KonnectToken)
	return os.WriteFile(filepath.Join(e.StateDir, "konnect.env"), []byte(env), 0o600)
}

// Stop stops the node (putting the machine back as it was), the registry, the simulator and the local cluster; it
// leaves no process behind.
func (e *Env) Stop() {
	if e.Node != nil {
		if err := e.Node.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the node: %v\n", err)
		}
	}
	if e.nodeLog != nil {
		_ = e.nodeLog.Close()
	}
	if e.Registry != nil {
		_ = e.Registry.Close()
	}
	if e.Sim != nil {
		_ = e.Sim.Close()
	}
	if e.CP != nil {
		_ = e.CP.Stop()
	}
	if e.logFile != nil {
		_ = e.logFile.Close()
	}
}

// SavePodLogs copies every pod's logs (each container's, each restart's) from where the kubelet writes them, which
// Stop removes, to StateDir/pod-logs, for a run that failed; it returns that directory.
func (e *Env) SavePodLogs() (string, error) {
	dest := filepath.Join(e.StateDir, "pod-logs")
	root := filepath.Join(localnode.RootDir, "pods")
	for path := range e.Logs("") {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return "", err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue // rotated or removed since
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dest, rel)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dest, rel), data, 0o644); err != nil {
			return "", err
		}
	}
	return dest, nil
}

// Path is a path under the repository root.
func (e *Env) Path(elem ...string) string {
	return filepath.Join(append([]string{e.Root}, elem...)...)
}

// Kubectl runs bin/kubectl with the admin kubeconfig and returns its output.
func (e *Env) Kubectl(ctx context.Context, args ...string) (string, error) {
	return e.run(ctx, e.Path("bin", "kubectl"), append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
}

// Almctl runs bin/almctl with the admin kubeconfig and returns its output.
func (e *Env) Almctl(ctx context.Context, args ...string) (string, error) {
	return e.run(ctx, e.Path("bin", "almctl"), append(args, "--kubeconfig", e.Kubeconfig)...)
}

func (e *Env) run(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// WaitDeploymentAvailable waits until the Deployment has rolled out its current spec and is Available.
func (e *Env) WaitDeploymentAvailable(ctx context.Context, namespace, name string, timeout time.Duration) error {
	return Poll(ctx, timeout, func() error {
		d := &appsv1.Deployment{}
		if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err
		}
		return rolledOut(d)
	})
}

// rolledOut is nil once a Deployment runs its current spec on every replica and is Available, as `kubectl rollout
// status` judges it.
func rolledOut(d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas < want || st.Replicas > st.UpdatedReplicas || st.AvailableReplicas < want {
		return fmt.Errorf("the Deployment %s/%s has %d of %d replicas updated and %d available (generation %d observed %d)%s",
			d.Namespace, d.Name, st.UpdatedReplicas, want, st.AvailableReplicas, d.Generation, st.ObservedGeneration, conditionText(d))
	}
	for _, c := range st.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("the Deployment %s/%s is not Available%s", d.Namespace, d.Name, conditionText(d))
}

func conditionText(d *appsv1.Deployment) string {
	var parts []string
	for _, c := range d.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// Poll calls cond every 200ms until it returns nil, ctx ends or timeout passes; the error then says what was
// last seen.
func Poll(ctx context.Context, timeout time.Duration, cond func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %w", timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Scheme knows the built-in kinds, ALM's and the Konnect operator's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorsv1alpha1.AddToScheme, konnectv1alpha1.AddToScheme, konnectv1alpha2.AddToScheme,
		configurationv1alpha1.AddToScheme, configurationv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Logs returns the log files the kubelet keeps of the containers of pods whose name starts with prefix ("" for
// all), by path: those of running pods and of pods not yet deleted (in the CRI format: time, stream, tag, line).
func (e *Env) Logs(prefix string) map[string]string {
	out := map[string]string{}
	root := filepath.Join(localnode.RootDir, "pods")
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // a pod directory removed while walking has no log to return
		}
		if d.IsDir() || !strings.HasSuffix(path, ".log") {
			return nil
		}
		// <root>/<namespace>_<pod>_<uid>/<container>/<restart>.log
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(strings.Split(rel, string(filepath.Separator))[0], "_")
		if len(parts) != 3 || !strings.HasPrefix(parts[1], prefix) {
			return nil
		}
		data, _ := os.ReadFile(path)
		out[path] = string(data)
		return nil
	})
	return out
}
