package localnode_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkNode starts a cluster and its node, runs a pod through the registry mirror, and reports how long the
// node took to be Ready with that pod Available, and the resident memory of the node's processes once idle.
func BenchmarkNode(b *testing.B) {
	for range b.N {
		start := time.Now()
		cp, node, err := startNode(b.Context(), b.TempDir(), os.Stderr)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-to-pod-available")
		time.Sleep(10 * time.Second) // idle: the first pod's pull and start are over
		for name, pid := range node.PIDs() {
			b.ReportMetric(rssMB(b, pid), name+"-RSS-MB")
		}
		if err := node.Stop(); err != nil {
			b.Error(err)
		}
		_ = cp.Stop()
	}
}

// rssMB is a process's resident memory (VmRSS) in MB.
func rssMB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1000
		}
	}
	b.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
