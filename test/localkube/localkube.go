// Package localkube runs a real local Kubernetes cluster for tests and `make run`: envtest's etcd and kube-apiserver
// plus a kube-controller-manager. Without a node (the default) it runs only the garbage collector, namespace and
// clusterrole-aggregation controllers, so ownerReference garbage collection, namespace deletion and role aggregation
// behave as in a real cluster, for tests that need only an API server. With Options.Node it is a cluster a real node
// (test/localnode) joins: every default controller, kube-scheduler, and an API server pods can reach (NodeOptions).
// ("Control plane" in this code base means a Konnect control plane; this package is the local Kubernetes API.)
//
// The binaries come from bin/ (built from source by hack/tools); nothing is downloaded. All processes are started
// with their state under one temporary directory, and a watchdog kills them if the process that started them dies
// without calling Stop (a panicking or timed-out test), so no cluster outlives its owner.
package localkube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Options configures a cluster. The zero value starts a cluster with garbage collection and no CRDs.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager. Default: $ALM_BIN_DIR, else <repo>/bin.
	BinDir string
	// CRDDirectoryPaths are directories (or files) of CRD manifests installed before Start returns.
	CRDDirectoryPaths []string
	// NoControllerManager skips kube-controller-manager (no garbage collection, no namespace deletion).
	NoControllerManager bool
	// Output receives the cluster processes' logs. Default: discarded.
	Output *os.File
	// APIServerFlags are extra kube-apiserver flags, name (without dashes) to value, e.g. "audit-log-path" and
	// "audit-policy-file" to record who made which request. They override the defaults of the same name.
	APIServerFlags map[string]string
	// Node makes a cluster a real node can join (test/localnode): see NodeOptions.
	Node *NodeOptions
}

// Cluster is a running local Kubernetes cluster: etcd, kube-apiserver and kube-controller-manager, no nodes.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for the same admin user, for kubectl and for other processes.
	KubeconfigPath string
	// Dir holds all state: etcd data, certificates, kubeconfig. It is removed by Stop.
	Dir string

	// Node is set when the cluster was started for a node (Options.Node).
	Node *NodeCluster

	env        *envtest.Environment
	components []*component // kube-controller-manager, kube-scheduler
	watchdog   *exec.Cmd
}

// component is a control-plane process besides etcd and kube-apiserver.
type component struct {
	cmd  *exec.Cmd
	done chan error
}

// RepoRoot returns the repository root: the nearest directory above the working directory that holds go.mod of
// module github.com/almproject/alm (tests run in their package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && len(data) > 0 && containsModule(string(data)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: no go.mod of github.com/almproject/alm above the working directory")
		}
		dir = parent
	}
}

func containsModule(gomod string) bool {
	const want = "module github.com/almproject/alm\n"
	return len(gomod) >= len(want) && gomod[:len(want)] == want
}

// BinDir returns where the cluster binaries are: $ALM_BIN_DIR, else <repo>/bin.
func BinDir() (string, error) {
	if dir := os.Getenv("ALM_BIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// configureAPIServer sets kube-apiserver's flags: for a node (NodeOptions), then opts.APIServerFlags.
func (cp *Cluster) configureAPIServer(opts Options) error {
	if opts.Node != nil {
		if err := cp.prepareForNode(*opts.Node); err != nil {
			return err
		}
	}
	for name, value := range opts.APIServerFlags {
		cp.env.ControlPlane.APIServer.Configure().Set(name, value)
	}
	return nil
}

// checkBinaries says which cluster binary is missing from opts.BinDir, and how to build it.
func checkBinaries(opts Options) error {
	bins := []string{"etcd", "kube-apiserver", "kube-controller-manager"}
	if opts.Node != nil {
		bins = append(bins, "kube-scheduler")
	}
	for _, bin := range bins {
		if _, err := os.Stat(filepath.Join(opts.BinDir, bin)); err != nil {
			return fmt.Errorf("cluster binary %s missing in %s: run `make tools` to build it from source: %w", bin, opts.BinDir, err)
		}
	}
	return nil
}

// Start starts etcd, kube-apiserver and (unless disabled) kube-controller-manager, installs the CRDs and returns
// once the API server answers and the CRDs are established.
func Start(opts Options) (_ *Cluster, err error) {
	if opts.BinDir == "" {
		if opts.BinDir, err = BinDir(); err != nil {
			return nil, err
		}
	}
	if err := checkBinaries(opts); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "alm-localkube-")
	if err != nil {
		return nil, err
	}
	cp := &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			_ = cp.Stop()
		}
	}()
	if err := cp.startWatchdog(); err != nil {
		return nil, err
	}

	cp.env = &envtest.Environment{
		BinaryAssetsDirectory: opts.BinDir,
		CRDDirectoryPaths:     opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing: len(opts.CRDDirectoryPaths) > 0,
		// Generous: `go test ./...` starts several clusters while other packages compile, on 2 cores.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	etcdDir := filepath.Join(dir, "etcd")
	certDir := filepath.Join(dir, "apiserver")
	for _, d := range []string{etcdDir, certDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cp.env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	cp.env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	if err := cp.configureAPIServer(opts); err != nil {
		return nil, err
	}
	if opts.Output != nil {
		cp.env.ControlPlane.Etcd.Out, cp.env.ControlPlane.Etcd.Err = opts.Output, opts.Output
		cp.env.ControlPlane.APIServer.Out, cp.env.ControlPlane.APIServer.Err = opts.Output, opts.Output
	}

	if _, err := cp.env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	admin, err := cp.env.AddUser(envtest.User{Name: "alm-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding the admin user: %w", err)
	}
	cp.Config = admin.Config()
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	cp.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cp.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	return cp, cp.startControllers(opts)
}

// startControllers starts what runs beside etcd and kube-apiserver: for a node, startForNode; otherwise
// kube-controller-manager with the controllers start describes, unless Options.NoControllerManager.
func (cp *Cluster) startControllers(opts Options) error {
	if opts.Node != nil {
		return cp.startForNode(opts)
	}
	if opts.NoControllerManager {
		return nil
	}
	return cp.start(opts, "kube-controller-manager",
		"--kubeconfig="+cp.KubeconfigPath,
		"--controllers=garbagecollector,namespace,clusterrole-aggregation",
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
	)
}

// start starts the control-plane binary name with args, in cp.Dir, logging to opts.Output. Without Options.Node,
// kube-controller-manager runs only the garbage collector, namespace and clusterrole-aggregation controllers (the
// last so that a ClusterRole's aggregationRule takes effect as on any cluster): with no node, the deployment and
// replicaset controllers would have nothing to run pods on.
func (cp *Cluster) start(opts Options, name string, args ...string) error {
	cmd := exec.Command(filepath.Join(opts.BinDir, name), args...)
	cmd.Dir = cp.Dir
	if opts.Output != nil {
		cmd.Stdout, cmd.Stderr = opts.Output, opts.Output
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	c := &component{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	cp.components = append(cp.components, c)
	return nil
}

// startWatchdog starts a shell that kills every process whose command line names cp.Dir once this process is gone.
// etcd, kube-apiserver and kube-controller-manager all carry a path under cp.Dir in their arguments; matching
// "<dir>/" keeps another cluster whose directory name merely starts with ours out of it.
func (cp *Cluster) startWatchdog() error {
	if runtime.GOOS != "linux" {
		return nil
	}
	// The directory goes through the environment, not the arguments, so that pkill does not match the watchdog.
	script := `while kill -0 "$1" 2>/dev/null; do sleep 1; done; pkill -KILL -f -- "$ALM_CONTROLPLANE_DIR/"; sleep 1; rm -rf -- "$ALM_CONTROLPLANE_DIR"`
	cp.watchdog = exec.Command("/bin/sh", "-c", script, "alm-localkube-watchdog", strconv.Itoa(os.Getpid()))
	cp.watchdog.Env = append(os.Environ(), "ALM_CONTROLPLANE_DIR="+cp.Dir)
	return cp.watchdog.Start()
}

// Stop stops every process and removes Dir. It is safe to call more than once and on a partly started plane.
func (cp *Cluster) Stop() error {
	var errs []error
	for _, c := range cp.components {
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	cp.components = nil
	if cp.env != nil {
		if err := cp.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
		}
		cp.env = nil
	}
	if cp.watchdog != nil && cp.watchdog.Process != nil {
		_ = cp.watchdog.Process.Kill()
		_ = cp.watchdog.Wait()
		cp.watchdog = nil
	}
	if cp.Dir != "" {
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same address, with the same certificates, users
// and etcd, as a crash or an upgrade of the API server would; clients keep their configuration and reconnect. It
// returns once the new API server answers its health check; etcd and kube-controller-manager keep running.
//
// The API server gets SIGTERM and, if it has not exited a few seconds later, SIGKILL: kube-apiserver v1.35 stops
// listening at once on SIGTERM but was seen here to take more than 30s to exit after that.
func (cp *Cluster) RestartAPIServer() error {
	if cp.env == nil || cp.env.ControlPlane.APIServer == nil {
		return errors.New("restarting kube-apiserver: the cluster is not running")
	}
	apiserver := cp.env.ControlPlane.APIServer
	pid, err := findProcess("kube-apiserver", "--cert-dir="+apiserver.CertDir)
	if err != nil {
		return err
	}
	stopProcess(pid, 3*time.Second)
	// The process is gone: Stop only releases envtest's hold on it (a retry once envtest has seen the exit).
	deadline := time.Now().Add(10 * time.Second)
	for err := apiserver.Stop(); err != nil; err = apiserver.Stop() {
		if time.Now().After(deadline) {
			return fmt.Errorf("stopping kube-apiserver (pid %d): %w", pid, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := apiserver.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again on %s: %w", apiserver.SecureServing.HostPort(), err)
	}
	return nil
}

// findProcess returns the id of the process named name (the base name of its first argument) that has arg among
// its arguments.
func findProcess(name, arg string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("finding the %s process: %w", name, err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(args[0]) == name && slices.Contains(args[1:], arg) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s process with argument %s", name, arg)
}

// stopProcess sends pid SIGTERM, and SIGKILL if it still runs after grace.
func stopProcess(pid int, grace time.Duration) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// ServiceAccountToken returns a bound token of the ServiceAccount namespace/name from the TokenRequest API, valid for
// an hour, creating the ServiceAccount (and namespace) when missing.
func (cp *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return "", err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	tr, err = cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// ServiceAccountConfig returns a client configuration that authenticates as the ServiceAccount namespace/name, so
// what a process may do is exactly what that ServiceAccount's RBAC grants.
func (cp *Cluster) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	token, err := cp.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = token
	return cfg, nil
}

// WriteKubeconfig writes cfg (server, CA and bearer token or client certificate) as a kubeconfig file at path.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, path)
}

// RunTests is for TestMain: it starts a cluster with opts, stores it in *cp, runs the package's tests and
// stops the plane whatever the outcome, returning the exit code for os.Exit.
func RunTests(m *testing.M, opts Options, cp **Cluster) int {
	// envtest logs through controller-runtime; tests that want controller logs set their own logger.
	ctrllog.SetLogger(logr.Discard())
	started, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local cluster: %v\n", err)
		return 1
	}
	*cp = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the local cluster: %v\n", err)
	}
	return code
}
