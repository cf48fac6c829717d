package localnode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// record is what a node changes on the machine that its teardown must put back, written before the node starts so
// that the next start can clean up after a run that crashed.
type record struct {
	// PID is the process that started the node.
	PID int `json:"pid"`
	// Sysctls are the values of the sysctls a node sets, before it started ("" for one the kernel lacks).
	Sysctls map[string]string `json:"sysctls"`
	// NFTables are the nftables tables ("family name") there were before.
	NFTables []string `json:"nftables"`
	// Created are the paths outside the node's directories that did not exist before and that the kubelet makes
	// (or may make) at fixed places.
	Created []string `json:"created"`
}

// sysctls are what kubelet (kernel tunables), the bridge plugin (forwarding) and kube-proxy (conntrack, local
// routing) may set.
var sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes", "net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables", "net/netfilter/nf_conntrack_max",
	"net/netfilter/nf_conntrack_tcp_timeout_established", "net/netfilter/nf_conntrack_tcp_timeout_close_wait",
}

// fixedPaths are where the node's programs write whatever their configuration says: the kubelet's container log
// links, device plugin sockets and mount(8)'s table, libcni's cache, containerd's shim sockets.
var fixedPaths = []string{"/var/log/containers", "/var/lib/kubelet", "/run/mount", "/var/lib/cni", "/run/containerd"}

// watchedPaths are where a node's programs would write by default, which its configuration moves elsewhere; HostState
// names them so that a change of default shows.
var watchedPaths = []string{
	RootDir, RunDir, RecordFile, "/var/log/pods", "/opt/containerd", "/run/nri", "/var/lib/containerd", "/etc/containerd",
	"/etc/cni", "/opt/cni", "/usr/libexec/kubernetes", "/var/run/netns", "/etc/kubernetes",
}

func newRecord() (*record, error) {
	r := &record{PID: os.Getpid(), Sysctls: map[string]string{}}
	for _, s := range sysctls {
		data, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err == nil {
			r.Sysctls[s] = strings.TrimSpace(string(data))
		}
	}
	tables, err := nftTables()
	if err != nil {
		return nil, err
	}
	r.NFTables = tables
	for _, p := range fixedPaths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			r.Created = append(r.Created, p)
		}
	}
	return r, nil
}

func (r *record) write() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(RecordFile, data, 0o600)
}

func readRecord() (*record, error) {
	data, err := os.ReadFile(RecordFile)
	if err != nil {
		return nil, err
	}
	r := &record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordFile, err)
	}
	return r, nil
}

// teardown puts the machine back as r found it: it kills the node's processes and containers, unmounts what is
// under the node's directories, removes its cgroups, its bridge and the nftables tables made since, restores the
// sysctls and removes the node's directories and the record. It goes on past errors and returns them all.
func teardown(r *record) error {
	var errs []error
	killNode()
	errs = append(errs, unmountUnder(RootDir, RunDir), removeCgroups())
	if _, err := net.InterfaceByName(Bridge); err == nil {
		if out, err := exec.Command("ip", "link", "delete", Bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("deleting interface %s: %w: %s", Bridge, err, out))
		}
	}
	tables, err := nftTables()
	errs = append(errs, err)
	for _, t := range tables {
		if !slices.Contains(r.NFTables, t) {
			family, name, _ := strings.Cut(t, " ")
			if out, err := exec.Command("nft", "delete", "table", family, name).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("deleting nftables table %s: %w: %s", t, err, out))
			}
		}
	}
	for s, v := range r.Sysctls {
		path := filepath.Join("/proc/sys", s)
		if cur, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(cur)) != v {
			if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring sysctl %s to %s: %w", s, v, err))
			}
		}
	}
	for _, p := range append([]string{RootDir, RunDir}, r.Created...) {
		errs = append(errs, os.RemoveAll(p))
	}
	errs = append(errs, os.Remove(RecordFile))
	return errors.Join(errs...)
}

// killNode kills the node's processes: kubelet and kube-proxy first (so nothing restarts a container), then every
// process in the node's cgroups (the containers), then the shims and containerd. A node process is one whose
// command line names the node's directories; every one of them does.
func killNode() {
	signalNode(func(args []string) bool {
		base := filepath.Base(args[0])
		return base == "kubelet" || base == "kube-proxy"
	}, 5*time.Second)
	for range 3 {
		for _, pid := range cgroupProcs() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	signalNode(func([]string) bool { return true }, 5*time.Second)
}

// signalNode sends SIGTERM to the node's processes that match, and SIGKILL to those still running after grace.
func signalNode(match func(args []string) bool, grace time.Duration) {
	var pids []int
	for pid, args := range nodeProcesses() {
		if match(args) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			pids = append(pids, pid)
		}
	}
	deadline := time.Now().Add(grace)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// nodeProcesses are the processes whose command line names the node's directories, by pid.
func nodeProcesses() map[int][]string {
	out := map[int][]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		s := string(cmdline)
		if strings.Contains(s, RootDir) || strings.Contains(s, RunDir) {
			out[pid] = strings.Split(strings.TrimRight(s, "\x00"), "\x00")
		}
	}
	return out
}

// cgroupDirs are the node's cgroup directories (the kubelet's cgroupRoot) in every cgroup v1 hierarchy, and in the
// unified one.
func cgroupDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", CgroupRoot))
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", CgroupRoot)); err == nil {
		dirs = append(dirs, filepath.Join("/sys/fs/cgroup", CgroupRoot))
	}
	return dirs
}

// makeCgroups creates the kubelet's root cgroup in every hierarchy (the kubelet refuses a cgroupRoot that does not
// exist), giving cpuset's the parent's CPUs and memory nodes, which a new cpuset cgroup lacks.
func makeCgroups() error {
	hierarchies, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return err
	}
	for _, h := range hierarchies {
		if !h.IsDir() || h.Name() == "unified" {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup", h.Name(), CgroupRoot)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		if h.Name() != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", h.Name(), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("setting %s of cgroup %s: %w", f, dir, err)
			}
		}
	}
	return nil
}

// cgroupProcs are the processes in the node's cgroups.
func cgroupProcs() []int {
	var pids []int
	for _, dir := range cgroupDirs() {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil //nolint:nilerr // a cgroup removed while walking has no processes
			}
			data, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroups removes the node's cgroups, deepest first; a cgroup whose last process is still exiting is retried
// for a few seconds.
func removeCgroups() error {
	var errs []error
	for _, root := range cgroupDirs() {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			var err error
			for range 50 {
				if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder unmounts (lazily) every mount point under the directories, deepest first: container root
// filesystems, volumes, network namespaces, containerd's shm.
func unmountUnder(dirs ...string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	var errs []error
	slices.Reverse(mounts)
	for _, m := range mounts {
		for _, d := range dirs {
			if m == d || strings.HasPrefix(m, d+"/") {
				if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
				}
				break
			}
		}
	}
	return errors.Join(errs...)
}

// mountPoints are the mount points of this process's mount namespace, in mount order.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// nftTables lists the nftables tables as "family name".
func nftTables() ([]string, error) {
	out, err := exec.Command("nft", "list", "tables").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("nft list tables: %w: %s (is nftables installed? `make tools` installs it)", err, out)
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, rest)
		}
	}
	return tables, nil
}

// HostState is a description of the machine state a node changes: sysctls, the nftables ruleset, network
// interfaces, mount points and paths under the node's and the kubelet's fixed directories. Two equal descriptions
// mean a node left nothing behind.
func HostState() (string, error) {
	var b strings.Builder
	for _, s := range sysctls {
		data, _ := os.ReadFile(filepath.Join("/proc/sys", s))
		fmt.Fprintf(&b, "sysctl %s = %s\n", s, strings.TrimSpace(string(data)))
	}
	ruleset, err := exec.Command("nft", "list", "ruleset").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("nft list ruleset: %w: %s", err, ruleset)
	}
	b.WriteString("nftables:\n" + string(ruleset))
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		fmt.Fprintf(&b, "interface %s\n", i.Name)
	}
	mounts, err := mountPoints()
	if err != nil {
		return "", err
	}
	b.WriteString("mounts:\n" + strings.Join(mounts, "\n") + "\n")
	for _, p := range append(slices.Clone(watchedPaths), fixedPaths...) {
		_, err := os.Lstat(p)
		fmt.Fprintf(&b, "path %s exists=%t\n", p, err == nil)
	}
	fmt.Fprintf(&b, "cgroups %v\n", cgroupDirs())
	return b.String(), nil
}

// HostIP is the machine's IPv4 address pods can reach it on: the address of the interface of the default route, or
// else of the first interface that is up and not loopback.
func HostIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	if name := defaultRouteInterface(); name != "" {
		ifaces = slices.DeleteFunc(ifaces, func(i net.Interface) bool { return i.Name != name })
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 || i.Name == Bridge {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("no IPv4 address for the node: no interface that is up and not loopback has one")
}

// defaultRouteInterface is the interface of the IPv4 default route (/proc/net/route), or "".
func defaultRouteInterface() string {
	data, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" {
			return f[0]
		}
	}
	return ""
}
