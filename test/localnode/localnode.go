// Package localnode runs one real Kubernetes node on this machine, joined to a local cluster of test/localkube:
// containerd (built from its module, with Debian's runc), the CNI bridge, host-local and loopback plugins, kubelet
// and kube-proxy (built from the pinned Kubernetes source). Pods run as containers from images pulled by containerd,
// through the registry mirrors Options names.
//
// A node changes the machine: sysctls, nftables tables, a bridge, mounts, cgroups and directories. So there is one
// node per machine: Start takes a lock (a second run waits, then refuses with a message naming the holder), records
// what it will change before it starts anything, and Stop puts it all back. A run that crashed without Stop leaves the
// record behind, and the next Start cleans up after it first; a watchdog also kills the node's processes once the
// process that started them is gone.
//
// Everything lives under RootDir and RunDir, and the kubelet's cgroups under CgroupRoot, so that teardown finds what
// is the node's without guessing.
package localnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/almproject/alm/test/localkube"
)

// Where the node lives and what it is called.
const (
	NodeName = "alm-node"
	// RootDir holds containerd's content and snapshots, the kubelet's root directory, pod logs, the CNI state and
	// the configuration files.
	RootDir = "/var/lib/alm-node"
	// RunDir holds sockets, containerd's state and network namespaces.
	RunDir = "/run/alm-node"
	// LockFile is held by the process that runs the node.
	LockFile = "/run/alm-node.lock"
	// RecordFile is what the running node changed on the machine (see record).
	RecordFile = "/var/lib/alm-node.record.json"
	// ContainerdSocket is containerd's CRI and API socket.
	ContainerdSocket = RunDir + "/containerd.sock"
	// CgroupRoot is the kubelet's root cgroup, in every hierarchy.
	CgroupRoot = "alm-node"
	// Bridge is the pod network's bridge.
	Bridge = "almcni0"
	// PodCIDR is the pod network.
	PodCIDR = "10.88.0.0/16"
	// RuncPath is Debian's runc.
	RuncPath = "/usr/sbin/runc"
)

// Mirror is where containerd pulls a registry host's images from.
type Mirror struct {
	// URL is the mirror's base URL: http://127.0.0.1:port or https://host:port.
	URL string
	// CAFile is a PEM CA bundle for an https mirror with a private CA.
	CAFile string
}

// Options configure a node.
type Options struct {
	// BinDir holds kubelet, kube-proxy, containerd, containerd-shim-runc-v2 and cni/. Default: localkube.BinDir().
	BinDir string
	// Cluster is the cluster to join, started with localkube.Options.Node.
	Cluster *localkube.Cluster
	// Mirrors maps a registry host (as image names have it, e.g. alm.local) to where it is pulled from.
	Mirrors map[string]Mirror
	// SandboxImage is the pod sandbox ("pause") image, pulled like any other.
	SandboxImage string
	// Output receives the node processes' logs. Default: discarded.
	Output io.Writer
	// MaxContainerRestartPeriod caps the kubelet's crash-loop backoff (crashLoopBackOff.maxContainerRestartPeriod,
	// at least 1s); zero keeps the kubelet's 5 minutes.
	MaxContainerRestartPeriod time.Duration
	// LockTimeout is how long Start waits for another run's node to stop. Default 15 minutes.
	LockTimeout time.Duration
	// Status receives a line when Start has to wait for the lock or cleans up after a crashed run. Default: stderr.
	Status io.Writer
}

// Node is a running node.
type Node struct {
	// IP is the node's address (the cluster's NodeOptions.IP).
	IP string
	// KubeletPort is the kubelet API's port on IP.
	KubeletPort int
	// HostBefore and HostAfter are HostState when Start had the machine's node lock (and had cleaned up after a
	// crashed run), and when Stop had put the machine back, before it released the lock: equal when the node left
	// nothing behind. (Taken without the lock, another package's node could be running.)
	HostBefore, HostAfter string

	opts               Options
	cluster            *localkube.Cluster
	kubeletHealthzPort int
	proxyPorts         [2]int // kube-proxy's health and metrics ports on loopback
	procs              map[string]*process
	lock               *os.File
	record             *record
	watchdog           *exec.Cmd
}

type process struct {
	cmd  *exec.Cmd
	args []string
	done chan error
}

// Start takes the machine's node lock, cleans up after a crashed run, and starts containerd, kubelet and kube-proxy;
// it returns once the node is Ready. On error, everything it changed is put back.
func Start(ctx context.Context, opts Options) (_ *Node, err error) {
	if opts.Cluster == nil || opts.Cluster.Node == nil {
		return nil, errors.New("localnode: the cluster was not started for a node (localkube.Options.Node)")
	}
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	n := &Node{opts: opts, cluster: opts.Cluster, IP: opts.Cluster.Node.IP, procs: map[string]*process{}}
	if err := n.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Stop())
		}
	}()
	if n.HostBefore, err = HostState(); err != nil {
		return nil, err
	}
	if n.record, err = newRecord(); err != nil {
		return nil, err
	}
	if err := n.record.write(); err != nil {
		return nil, err
	}
	if err := n.startWatchdog(); err != nil {
		return nil, err
	}
	if err := n.writeFiles(); err != nil {
		return nil, err
	}
	if err := makeCgroups(); err != nil {
		return nil, err
	}
	if err := n.startContainerd(ctx); err != nil {
		return nil, err
	}
	if err := n.startKubelet(); err != nil {
		return nil, err
	}
	if err := n.startKubeProxy(); err != nil {
		return nil, err
	}
	return n, n.waitReady(ctx, 2*time.Minute)
}

func (o *Options) defaults() error {
	if o.BinDir == "" {
		dir, err := localkube.BinDir()
		if err != nil {
			return err
		}
		o.BinDir = dir
	}
	for _, bin := range []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "cni/bridge", "cni/host-local", "cni/loopback"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, bin)); err != nil {
			return fmt.Errorf("node binary %s missing in %s: run `make tools` to build it from source: %w", bin, o.BinDir, err)
		}
	}
	for _, bin := range []string{RuncPath, "/usr/sbin/nft"} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s missing: run `make tools` (it installs runc and nftables from Debian): %w", bin, err)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("a local node needs root (it runs containerd and the kubelet)")
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 15 * time.Minute
	}
	if o.Status == nil {
		o.Status = os.Stderr
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	return nil
}

// acquire takes LockFile, waiting up to LockTimeout for another run's node, then tears down what a crashed run
// left behind.
func (n *Node) acquire(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(LockFile), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(LockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	deadline, said := time.Now().Add(n.opts.LockTimeout), false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		holder, _ := os.ReadFile(LockFile)
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = f.Close()
			return fmt.Errorf("another run's node holds %s (pid %s) for more than %s: one node per machine; wait for it "+
				"to finish or stop it", LockFile, string(holder), n.opts.LockTimeout)
		}
		if !said {
			fmt.Fprintf(n.opts.Status, "localnode: waiting for the node of pid %s to stop (one node per machine)\n", holder)
			said = true
		}
		time.Sleep(time.Second)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	n.lock = f
	if old, err := readRecord(); err == nil {
		fmt.Fprintf(n.opts.Status, "localnode: cleaning up after the node of pid %d, which did not stop\n", old.PID)
		if err := teardown(old); err != nil {
			return fmt.Errorf("cleaning up after a crashed node run: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Stop stops the node and puts the machine back as Start found it; then it releases the lock. Safe to call twice.
func (n *Node) Stop() error {
	if n.lock == nil {
		return nil
	}
	var err error
	if n.record != nil {
		err = teardown(n.record)
	}
	for _, p := range n.procs {
		<-p.done
	}
	if n.watchdog != nil && n.watchdog.Process != nil {
		_ = n.watchdog.Process.Kill()
		_ = n.watchdog.Wait()
	}
	if after, herr := HostState(); herr == nil {
		n.HostAfter = after
	} else {
		err = errors.Join(err, herr)
	}
	_ = n.lock.Close()
	n.lock = nil
	return err
}

// startWatchdog starts a shell that, once this process is gone without Stop, kills the node's processes and
// containers. The rest of the teardown (mounts, netfilter, sysctls) is the next Start's.
func (n *Node) startWatchdog() error {
	script := `while kill -0 "$1" 2>/dev/null; do sleep 1; done
pkill -KILL -f -- "$ALM_NODE_KUBELET"; pkill -KILL -f -- "$ALM_NODE_PROXY"
for f in $(find /sys/fs/cgroup/*/"$ALM_NODE_CGROUP" -name cgroup.procs 2>/dev/null); do xargs -r kill -KILL < "$f"; done
pkill -KILL -f -- "$ALM_NODE_RUN"`
	n.watchdog = exec.Command("/bin/sh", "-c", script, "alm-localnode-watchdog", strconv.Itoa(os.Getpid()))
	n.watchdog.Env = append(os.Environ(), "ALM_NODE_KUBELET="+filepath.Join(RootDir, "kubelet.yaml"),
		"ALM_NODE_PROXY="+filepath.Join(RootDir, "kube-proxy.yaml"), "ALM_NODE_CGROUP="+CgroupRoot, "ALM_NODE_RUN="+RunDir+"/")
	return n.watchdog.Start()
}

// writeFiles writes the configuration files and makes the node's directories.
func (n *Node) writeFiles() error {
	var err error
	if n.KubeletPort, err = freePort(n.IP); err != nil {
		return err
	}
	for _, p := range []*int{&n.kubeletHealthzPort, &n.proxyPorts[0], &n.proxyPorts[1]} {
		if *p, err = freePort("127.0.0.1"); err != nil {
			return err
		}
	}
	proxyKubeconfig, err := n.cluster.UserKubeconfig("system:kube-proxy")
	if err != nil {
		return err
	}
	files := n.hostsFiles()
	files[filepath.Join(RootDir, "containerd.toml")] = n.containerdConfig()
	files[filepath.Join(n.cniConfDir(), "10-alm-node.conflist")] = n.cniConfig()
	files[filepath.Join(RootDir, "kubelet.yaml")] = n.kubeletConfig()
	files[filepath.Join(RootDir, "kube-proxy.yaml")] = n.kubeProxyConfig(proxyKubeconfig)
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(RunDir, 0o755)
}

func (n *Node) start(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(n.opts.BinDir, name), args...)
	cmd.Stdout, cmd.Stderr = n.opts.Output, n.opts.Output
	// Its own process group: a terminal's ^C reaches the test or `make run`, which stops the node in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{cmd: cmd, args: args, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	n.procs[name] = p
	return nil
}

func (n *Node) startContainerd(ctx context.Context) error {
	if err := n.start("containerd", "--config", filepath.Join(RootDir, "containerd.toml")); err != nil {
		return err
	}
	return n.waitSocket(ctx)
}

// waitSocket waits until containerd listens.
func (n *Node) waitSocket(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.Dial("unix", ContainerdSocket)
		if err == nil {
			return conn.Close()
		}
		select {
		case err := <-n.procs["containerd"].done:
			return fmt.Errorf("containerd exited: %w (see the node's log)", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd did not listen on %s within a minute", ContainerdSocket)
		}
	}
}

func (n *Node) startKubelet() error {
	kubeconfig, err := n.cluster.UserKubeconfig("system:node:"+NodeName, "system:nodes")
	if err != nil {
		return err
	}
	return n.start("kubelet",
		"--config="+filepath.Join(RootDir, "kubelet.yaml"),
		"--kubeconfig="+kubeconfig,
		"--hostname-override="+NodeName,
		"--node-ip="+n.IP,
		"--root-dir="+filepath.Join(RootDir, "kubelet"),
		"--cert-dir="+filepath.Join(RootDir, "kubelet", "pki"),
	)
}

func (n *Node) startKubeProxy() error {
	return n.start("kube-proxy", "--config="+filepath.Join(RootDir, "kube-proxy.yaml"))
}

// Restart stops one of the node's processes ("containerd", "kubelet" or "kube-proxy") with SIGTERM, as a service
// manager restarting it would, and starts it again with the same arguments; containers keep running (their shims
// outlive containerd). It returns once the process was started again and, for the kubelet, the node is Ready.
func (n *Node) Restart(ctx context.Context, name string) error {
	p, ok := n.procs[name]
	if !ok {
		return fmt.Errorf("the node runs no %s", name)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if err := n.start(name, p.args...); err != nil {
		return err
	}
	if name == "containerd" {
		return n.waitSocket(ctx)
	}
	return n.waitReady(ctx, 2*time.Minute)
}

// PIDs are the node's processes by name ("containerd", "kubelet", "kube-proxy").
func (n *Node) PIDs() map[string]int {
	out := map[string]int{}
	for name, p := range n.procs {
		out[name] = p.cmd.Process.Pid
	}
	return out
}

// ContainerPIDs are the processes of a container (a CRI container ID, as a pod's status has it after
// "containerd://"), its main process first, found through the kubelet's cgroups.
func ContainerPIDs(containerID string) []int {
	id := containerID[strings.LastIndex(containerID, "/")+1:]
	var pids []int
	for _, pattern := range []string{"kubepods/pod*/" + id, "kubepods/*/pod*/" + id} {
		dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/pids", CgroupRoot, pattern))
		for _, d := range dirs {
			data, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	sort.Ints(pids)
	return pids
}

// waitReady waits until the node reports Ready.
func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(n.cluster.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "not registered"
	for {
		node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
				}
			}
		}
		for name, p := range n.procs {
			select {
			case err := <-p.done:
				p.done <- err
				return fmt.Errorf("%s exited: %w (see the node's log)", name, err)
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready after %s: %s", NodeName, timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// freePort is a TCP port free on host now.
func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
