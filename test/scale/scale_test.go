package scale

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localkube"
)

// skipWithoutCluster skips when the cluster binaries are not built (make tools) or in -short.
func skipWithoutCluster(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("scale: not in -short")
	}
	dir, err := localkube.BinDir()
	if err == nil {
		_, err = os.Stat(dir + "/kube-apiserver")
	}
	if err != nil {
		tb.Skipf("scale: cluster binaries missing (%v): run make tools", err)
	}
}

// TestScaleSmall installs 20 AppTypes in 4 namespaces and checks what can be counted reliably on a busy machine:
// every install is Succeeded and Ready, ALM reads nothing it applies from the API server, and an install costs at
// most 3 API requests beyond creating its objects (the OperatorVersion's status twice, Installing and Succeeded,
// and the AppType's once) and at most 1 Event. The objects an install creates are the bundle's 7 and the
// OperatorVersion (created with its cleanup finalizer); the count leaves out what ALM does once however many
// installs there are (informers' lists and watches, discovery).
func TestScaleSmall(t *testing.T) {
	skipWithoutCluster(t)
	res, err := Run(context.Background(), Options{Namespaces: 4, PerNamespace: 5, Packages: 10, Upgrade: true, Timeout: 5 * time.Minute, Log: logWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
	if res.Succeeded != res.Installs || res.Ready != res.Installs {
		t.Errorf("%d of %d OperatorVersions Succeeded and %d AppTypes Ready, want all", res.Succeeded, res.Installs, res.Ready)
	}
	// Discovery is no object: the manager's, and ALM's wait for the API server at start (with a timeout parameter).
	discovery := res.Requests["get /api"] + res.Requests["get /apis"] + res.Requests["get /api?timeout=32s"] + res.Requests["get /apis?timeout=32s"]
	if gets := res.Requests.Verb("get") - discovery; gets > 0 {
		t.Errorf("ALM read %d objects from the API server, want none (the installer reads from its cache); by verb and resource:\n%s", gets, res.Requests)
	}
	created := res.ObjectsPerInstall + 1 // and the OperatorVersion
	if got, budget := res.InstallRequestsPerInstall(), float64(created+3); got > budget {
		t.Errorf("an install cost %.2f API requests, want at most %.0f (%d objects created, 2 OperatorVersion status writes, "+
			"1 AppType status write); by verb and resource:\n%s", got, budget, created, res.Requests)
	}
	if events := float64(res.Requests.Events()) / float64(res.Installs); events > 1 {
		t.Errorf("an install recorded %.2f Events, want at most 1", events)
	}
	checkUpgrade(t, res)
}

// checkUpgrade checks the third workflow of a run: every install upgraded to the published version, every old
// version collected, every object both versions ship handed over with its UID (not re-created), the object the
// new version dropped removed and the one it added created, within the request budget.
func checkUpgrade(t *testing.T, res *Result) {
	t.Helper()
	u := res.Upgrade
	if u.Upgraded != res.Installs || u.OldLeft != 0 {
		t.Errorf("%d of %d AppTypes upgraded, %d old OperatorVersions left, want all upgraded and none left", u.Upgraded, res.Installs, u.OldLeft)
	}
	if u.Recreated != 0 {
		t.Errorf("%d objects were deleted and created again under the same name during the upgrades (%d kept, %d removed, %d added), want none",
			u.Recreated, u.Kept, u.Removed, u.Added)
	}
	if u.RemovedLeft != 0 || u.AddedMissing != 0 {
		t.Errorf("after the upgrades %d ConfigMaps only the old version ships are left and %d the new one ships are missing; want none", u.RemovedLeft, u.AddedMissing)
	}
	// Hand-overs write from the metadata cache: no object is read from the API server. Discovery of kinds the
	// cluster does not serve is remembered for 10s, not asked again for every look at what a version owns.
	gets, discovery, lists := 0, 0, 0
	for k, n := range u.Requests {
		switch {
		case strings.HasPrefix(k, "get /"):
			discovery += n
		case strings.HasPrefix(k, "get "):
			gets += n
		case strings.HasPrefix(k, "list "):
			lists += n
		}
	}
	// What a version the Upgrade loop handed over owns is not asked of the API server again (a list per kind of
	// its plan, 9 per upgrade, when it was); a list now and then is an informer's relist.
	if per := float64(lists) / float64(res.Installs); per > 0.5 {
		t.Errorf("the upgrades listed %.2f times per upgrade, want none (the GC loop and the cleanup finalizer trust the cache for a version handed over); by verb and resource:\n%s", per, u.Requests)
	}
	// Two each, and a little for a write retried after a conflict (each try is a request).
	per := func(key string) float64 { return float64(u.Requests[key]) / float64(res.Installs) }
	if at := per("patch apptypes.operators.alm.dev/status"); at > 2.25 {
		t.Errorf("an upgrade wrote the AppType's status %.2f times, want 2 (the upgrade offered, the new version Ready)", at)
	}
	if events := float64(u.Requests.Events()) / float64(res.Installs); events > 2.25 {
		t.Errorf("an upgrade recorded %.2f Events, want 2 (the AppType's Upgrading, the new version's Adopted)", events)
	}
	if gets > 0 {
		t.Errorf("the upgrades read %d objects from the API server, want none (hand-overs write from the cache); by verb and resource:\n%s", gets, u.Requests)
	}
	if limit := 2*int(u.Took/(10*time.Second)) + 4; discovery > limit {
		t.Errorf("the upgrades made %d discovery requests in %.0fs, want at most %d (a kind that is not served is looked up again after 10s)", discovery, u.Took.Seconds(), limit)
	}
	// The target (BenchmarkScale's row) is 2 x the objects the new version ships; what an upgrade costs beyond it
	// is in the closing note of issue 23 and the README ("What an upgrade costs"). This bound catches regressions:
	// 89.7 before hand-overs wrote from the cache and discovery misses were remembered, 54 while "owns nothing" was
	// asked of every kind ALM installs and both installing loops ran the cleanup finalizer, 34.4 while the GC loop
	// and the finalizer asked the API server what a version handed over owns (9 lists) and an upgrade had three
	// Events and three AppType status writes, 23.5 since.
	if got, budget := u.RequestsPerUpgrade(res.Installs), 25.0; got > budget {
		t.Errorf("an upgrade cost %.2f API requests, want at most %.0f; by verb and resource:\n%s", got, budget, u.Requests)
	}
}

// BenchmarkScale is issue 13's scale run: 1,000 AppTypes across 100 namespaces from a 50-package catalog (sizes from
// ALM_SCALE_NAMESPACES, ALM_SCALE_PER_NAMESPACE, ALM_SCALE_PACKAGES; extra ALM flags from ALM_SCALE_ALM_ARGS, extra settings of its environment from ALM_SCALE_ALM_ENV; ALM_SCALE_PEAK_PROFILES=1 for heap profiles at the peaks; ALM_SCALE_KEEP=1 keeps the audit log and ALM's log).
// Targets (hack/benchtable): rss-MB <= 100, requests/install <= 12, s-after-available <= 30. The installs' peak RSS
// is judged by the highest of installRuns runs (ALM_SCALE_RUNS overrides): one with the upgrade, the others
// installs only, each with a fresh cluster and ALM.
func BenchmarkScale(b *testing.B) {
	benchScale(b, Options{Namespaces: 100, PerNamespace: 10, Packages: 50, Upgrade: true, Timeout: 20 * time.Minute, Log: os.Stderr}, installRuns)
}

// installRuns is how many runs BenchmarkScale measures the installs' peak RSS in: one run met the 100 MB target
// at 99 MB after ten at 105–122 MB, so a figure holds only as the worst of several.
const installRuns = 3

// BenchmarkScaleWaves is BenchmarkScale with the upgrade rolled out in waves by the CatalogSource's spec.rollout
// (issue 38): per package (20 installs each at the default size), a canary of 1, then up to 25%, then the rest,
// without soak, so that the figures show what the waves themselves cost in time and requests against
// BenchmarkScale's s-upgraded and requests/upgrade. Sizes from the same ALM_SCALE_* variables.
func BenchmarkScaleWaves(b *testing.B) {
	benchScale(b, Options{Namespaces: 100, PerNamespace: 10, Packages: 50, Upgrade: true, Timeout: 20 * time.Minute, Log: os.Stderr,
		Rollout: &operatorsv1alpha1.RolloutPolicy{Canary: &operatorsv1alpha1.RolloutCanary{Count: ptr.To[int32](1)},
			Waves: []intstr.IntOrString{intstr.FromString("25%")}}}, 1)
}

// BenchmarkScaleGOGC15 is BenchmarkScale's upgrade with ALM's collector at GOGC=15 instead of ALM's default, 30: what
// a smaller peak during the upgrades (upgrade-rss-MB) costs in ALM's CPU (upgrade-cpu-s-alm) and in time
// (s-upgraded), against BenchmarkScale's rows. One run.
func BenchmarkScaleGOGC15(b *testing.B) {
	benchScale(b, Options{Namespaces: 100, PerNamespace: 10, Packages: 50, Upgrade: true, Timeout: 20 * time.Minute, Log: os.Stderr,
		ALMEnv: []string{"GOGC=15"}}, 1)
}

// BenchmarkScale10k is ten times that: 10,000 AppTypes across 1,000 namespaces (goal: rss-MB <= 300). It takes
// long, so it runs only with ALM_SCALE_10K=1 (make bench-scale-10k).
func BenchmarkScale10k(b *testing.B) {
	if os.Getenv("ALM_SCALE_10K") != "1" {
		b.Skip("10,000 installs: run with ALM_SCALE_10K=1 (make bench-scale-10k)")
	}
	benchScale(b, Options{Namespaces: 1000, PerNamespace: 10, Packages: 50, Timeout: 60 * time.Minute, Log: os.Stderr}, 1)
}

// benchScale runs size once as it is, then runs-1 times more without the upgrade, and reports the first run's
// figures with the installs' peak RSS as the highest of all runs (rss-MB) beside the lowest and the median.
func benchScale(b *testing.B, size Options, runs int) {
	skipWithoutCluster(b)
	o, err := Size(size)
	if err != nil {
		b.Fatal(err)
	}
	if v := os.Getenv("ALM_SCALE_RUNS"); v != "" {
		if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
			b.Fatalf("ALM_SCALE_RUNS=%q: want a positive number", v)
		}
	}
	var res *Result
	for i := 0; i < b.N; i++ {
		if res, err = Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	peaks := []float64{res.PeakRSS}
	for i := 1; i < runs; i++ {
		more := o
		more.Upgrade, more.HeapProfile = false, ""
		again, err := Run(context.Background(), more)
		if err != nil {
			b.Fatal(err)
		}
		peaks = append(peaks, again.PeakRSS)
	}
	sort.Float64s(peaks)
	b.Logf("ALM's peak RSS in %d runs of %d installs: %s MB", runs, res.Installs, formatMB(peaks))
	report(b, res)
	b.ReportMetric(float64(res.Installs), "installs")
	b.ReportMetric(float64(res.Succeeded), "succeeded")
	b.ReportMetric(peaks[len(peaks)-1]/1e6, "rss-MB")
	b.ReportMetric(peaks[0]/1e6, "rss-MB-lowest")
	b.ReportMetric(peaks[len(peaks)/2]/1e6, "rss-MB-median")
	b.ReportMetric(float64(runs), "rss-runs")
	b.ReportMetric(res.PeakHeap/1e6, "heap-MB")
	b.ReportMetric(res.RequestsPerInstall(), "requests/install")
	b.ReportMetric(res.CostPerInstall(), "install-requests/install")
	b.ReportMetric(res.RequestsPerInstallWithoutEvents(), "requests-no-events/install")
	b.ReportMetric(float64(res.Requests.Verb("get"))/float64(res.Installs), "gets/install")
	b.ReportMetric(res.ReconcilesPerInstall(), "reconciles/install")
	b.ReportMetric(res.AfterAvailable.Seconds(), "s-after-available")
	b.ReportMetric(res.Converged.Seconds(), "s-converged")
	// What ALM's resident memory at the end is for (MemoryUses), in MB.
	for use, n := range res.Memory {
		b.ReportMetric(n/1e6, "mem-"+strings.NewReplacer(": ", "-", " ", "-").Replace(use)+"-MB")
	}
	// What the requests are for, per install (Requests.Purposes).
	for purpose, n := range res.Requests.Purposes() {
		b.ReportMetric(float64(n)/float64(res.Installs), "req-"+purpose+"/install")
	}
	if u := res.Upgrade; u != nil {
		b.ReportMetric(float64(u.Upgraded), "upgraded")
		b.ReportMetric(float64(u.OldLeft), "old-left")
		b.ReportMetric(u.Took.Seconds(), "s-upgraded")
		b.ReportMetric(u.AfterAvailable.Seconds(), "s-upgraded-after-available")
		b.ReportMetric(u.RequestsPerUpgrade(res.Installs), "requests/upgrade")
		b.ReportMetric(float64(u.Recreated), "recreated")
		b.ReportMetric(u.PeakRSS/1e6, "upgrade-rss-MB")
		b.ReportMetric(u.Allocated/1e3/float64(res.Installs), "upgrade-alloc-kB/upgrade")
		// What bounds the time: the CPU each process used during the upgrades, and all of them in cores.
		for name, t := range u.CPU {
			b.ReportMetric(t.Seconds(), "upgrade-cpu-s-"+name)
		}
		b.ReportMetric(u.CPU.Total().Seconds()/u.Took.Seconds(), "upgrade-cpu-cores")
		// The floor of s-upgraded on this machine: the CPU every process of the run used for the upgrades, spread
		// over all its cores with none idle. No change to ALM's timing beats it; fewer requests (each costs the
		// API server and etcd, and every informer watching, CPU) or more cores lower it.
		b.ReportMetric(u.CPU.Total().Seconds()/float64(runtime.NumCPU()), "upgrade-cpu-floor-s")
		if n := u.Requests.Total(); n > 0 {
			b.ReportMetric(u.CPU["kube-apiserver"].Seconds()*1e3/float64(n), "upgrade-apiserver-cpu-ms/request")
		}
		// What an upgrade's requests are for (Requests.Purposes), per upgrade.
		for purpose, n := range u.Requests.Purposes() {
			b.ReportMetric(float64(n)/float64(res.Installs), "upgrade-req-"+purpose+"/upgrade")
		}
	}
}

// report logs the figures in a few lines (benchmark logs are cut after ten lines unless -v).
func report(tb testing.TB, res *Result) {
	tb.Helper()
	var reconciles []string
	for name, n := range res.Reconciles {
		reconciles = append(reconciles, name+"="+formatPer(n, res.Installs))
	}
	sort.Strings(reconciles)
	tb.Logf("%d installs of %d objects: %d Succeeded, %d Ready; converged %.1fs after the first AppType, %.1fs after the last Deployment was available",
		res.Installs, res.ObjectsPerInstall, res.Succeeded, res.Ready, res.Converged.Seconds(), res.AfterAvailable.Seconds())
	tb.Logf("ALM memory: RSS %.1f MB now, %.1f MB peak (VmHWM); heap %.1f MB now, %.1f MB peak sampled",
		res.RSS/1e6, res.PeakRSS/1e6, res.Heap/1e6, res.PeakHeap/1e6)
	tb.Logf("reconciles per install: %.2f (%s)", res.ReconcilesPerInstall(), strings.Join(reconciles, " "))
	var uses []string
	for use, n := range res.Memory {
		uses = append(uses, fmt.Sprintf("%s %.1f MB", use, n/1e6))
	}
	sort.Strings(uses)
	tb.Logf("ALM's resident memory at the end, by use: %s", strings.Join(uses, ", "))
	tb.Logf("API requests per install: %.2f (%d in all; %.2f without Events; %.2f without Events and start-up); per install by verb and resource: %s",
		res.RequestsPerInstall(), res.Requests.Total(), res.RequestsPerInstallWithoutEvents(), res.InstallRequestsPerInstall(),
		res.Requests.PerInstall(res.Installs))
	if u := res.Upgrade; u != nil {
		tb.Logf("upgrades: %d of %d AppTypes run %s, %d old OperatorVersions left, %.1fs after the publish (%.1fs after the last Deployment available); "+
			"objects: %d kept, %d re-created, %d removed, %d added; ALM peak RSS during the upgrades %.1f MB",
			u.Upgraded, res.Installs, upgradeVersion, u.OldLeft, u.Took.Seconds(), u.AfterAvailable.Seconds(),
			u.Kept, u.Recreated, u.Removed, u.Added, u.PeakRSS/1e6)
		tb.Logf("API requests per upgrade: %.2f (%d in all); per upgrade by verb and resource: %s",
			u.RequestsPerUpgrade(res.Installs), u.Requests.Total(), u.Requests.PerInstall(res.Installs))
		var cpu []string
		for name, t := range u.CPU {
			cpu = append(cpu, fmt.Sprintf("%s %.1fs", name, t.Seconds()))
		}
		sort.Strings(cpu)
		tb.Logf("CPU used during the upgrades: %s; %.1fs in all, %.2f cores on average over %.1fs",
			strings.Join(cpu, ", "), u.CPU.Total().Seconds(), u.CPU.Total().Seconds()/u.Took.Seconds(), u.Took.Seconds())
	}
}

// formatMB lists byte counts in MB, comma-separated.
func formatMB(bytes []float64) string {
	parts := make([]string, len(bytes))
	for i, n := range bytes {
		parts[i] = strconv.FormatFloat(n/1e6, 'f', 1, 64)
	}
	return strings.Join(parts, ", ")
}

func formatPer(n float64, installs int) string {
	return strconv.FormatFloat(n/float64(installs), 'f', 2, 64)
}

// logWriter sends the run's progress lines to the test log.
type logWriter struct{ tb testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
