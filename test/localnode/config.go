package localnode

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// containerdConfig is containerd's configuration (version 3): everything under the node's own directories, its own
// socket, the runc shim built from the pinned module (runtime_path, or containerd would take any shim on PATH) with
// Debian's runc and cgroupfs, the CNI plugins of bin/cni, the registry hosts under certs.d, and the sandbox (pause)
// image from the mirror. restrict_oom_score_adj: the machine's root lacks CAP_SYS_RESOURCE, so a container may not be
// given an OOM score below containerd's own.
func (n *Node) containerdConfig() string {
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins.'io.containerd.internal.v1.opt']
  path = %[11]q

[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %[5]q
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = %[6]q

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = %[7]q
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = %[8]q
        Root = %[12]q
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%[9]q]
    conf_dir = %[10]q
`, filepath.Join(RootDir, "containerd"), filepath.Join(RunDir, "containerd"), ContainerdSocket,
		filepath.Join(RunDir, "containerd-ttrpc.sock"), n.opts.SandboxImage, n.certsDir(),
		filepath.Join(n.opts.BinDir, "containerd-shim-runc-v2"), RuncPath, filepath.Join(n.opts.BinDir, "cni"), n.cniConfDir(), filepath.Join(RootDir, "opt"), filepath.Join(RunDir, "runc"))
}

func (n *Node) certsDir() string   { return filepath.Join(RootDir, "certs.d") }
func (n *Node) cniConfDir() string { return filepath.Join(RootDir, "cni", "net.d") }

// hostsFiles are containerd's certs.d files: each mirrored registry host is pulled from its mirror only.
func (n *Node) hostsFiles() map[string]string {
	files := map[string]string{}
	hosts := make([]string, 0, len(n.opts.Mirrors))
	for h := range n.opts.Mirrors {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		m := n.opts.Mirrors[h]
		var b strings.Builder
		fmt.Fprintf(&b, "server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", m.URL, m.URL)
		if m.CAFile != "" {
			fmt.Fprintf(&b, "  ca = %q\n", m.CAFile)
		}
		files[filepath.Join(n.certsDir(), h, "hosts.toml")] = b.String()
	}
	return files
}

// cniConfig is the pod network: one bridge (cni0) with host-local addresses from PodCIDR, masquerading what leaves
// it through nftables (the bridge plugin's default would need iptables, which this node does not use), and hairpin
// mode so that a pod reaches itself through its Service.
func (n *Node) cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "alm-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": true,
      "ipMasqBackend": "nftables",
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "loopback"}
  ]
}
`, Bridge, filepath.Join(RootDir, "cni", "networks"), PodCIDR)
}

// kubeletConfig is the kubelet's configuration: cgroup v1 allowed (this kernel has nothing else), cgroupfs under
// its own root cgroup, client certificates of the cluster's kubelet-client CA and webhook authorization (so only
// kube-apiserver and those RBAC lets call the kubelet's API), the node's own directories, and eviction thresholds low
// enough for a development machine's disk.
func (n *Node) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%[1]s
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: %[4]d
healthzBindAddress: 127.0.0.1
healthzPort: %[5]d
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[6]q}
authorization:
  mode: Webhook
podLogsDir: %[7]q
failSwapOn: false
resolvConf: %[8]q
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: 100Mi, nodefs.available: 1%%, imagefs.available: 1%%, nodefs.inodesFree: 1%%}
nodeStatusReportFrequency: 10s
syncFrequency: 10s
maxPods: 110
volumePluginDir: %[9]q
%[10]s`, CgroupRoot, ContainerdSocket, n.IP, n.KubeletPort, n.kubeletHealthzPort, n.cluster.Node.KubeletClientCAFile,
		filepath.Join(RootDir, "pods"), resolvConf(), filepath.Join(RootDir, "volume-plugins"), n.crashLoopBackOff())
}

// crashLoopBackOff is the kubelet's crashLoopBackOff setting (feature KubeletCrashLoopBackOffMax, beta and on in
// v1.35), when Options.MaxContainerRestartPeriod is set.
func (n *Node) crashLoopBackOff() string {
	if n.opts.MaxContainerRestartPeriod == 0 {
		return ""
	}
	return fmt.Sprintf("crashLoopBackOff: {maxContainerRestartPeriod: %s}\n", max(n.opts.MaxContainerRestartPeriod, time.Second))
}

// resolvConf is the host's resolver configuration that pods get (there is no cluster DNS), or none.
func resolvConf() string {
	if _, err := os.Stat("/etc/resolv.conf"); err == nil {
		return "/etc/resolv.conf"
	}
	return ""
}

// kubeProxyConfig is kube-proxy's configuration: the nftables mode (no iptables binary needed), masquerading all
// Service traffic (so that replies come back through the host even between pods on the one bridge, whatever the
// machine's br_netfilter says), and no conntrack sysctls touched.
func (n *Node) kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: %[1]q}
hostnameOverride: %[2]s
clusterCIDR: %[3]s
bindAddress: %[4]s
healthzBindAddress: 127.0.0.1:%[5]d
metricsBindAddress: 127.0.0.1:%[6]d
nodePortAddresses: [primary]
nftables: {masqueradeAll: true}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
`, kubeconfig, NodeName, PodCIDR, n.IP, n.proxyPorts[0], n.proxyPorts[1])
}
