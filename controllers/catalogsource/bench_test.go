package catalogsource

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/test/opm"
)

// The catalog image benchmarks: the 10,000-bundle catalog of benchcatalog_test.go pushed as a catalog image to a
// registry in the benchmark's process (go-containerregistry's pkg/registry, plain HTTP on loopback), behind a handler
// that counts the requests and the bytes it answers.
//
// BenchmarkCatalogImage10k measures one poll of a new CatalogSource to serving as the loop does it (pollOnce: the
// manifest digest, PullCatalog, fbc.LoadFS, the index, the status summary), in a child process per measurement (the
// test binary again, TestBenchChild), beside `opm render --use-http <ref> -o json` (bin/opm, test/opm's isolated
// environment) in the same rounds. BenchmarkCatalogImageUnchangedPoll measures the poll of a source whose digest is
// the one it serves, with the client the loop keeps for it.

const (
	benchChildEnv = "ALM_BENCH_CHILD" // the child's mode
	benchRefEnv   = "ALM_BENCH_REF"   // the catalog image the child polls
	servingPrefix = "alm-serving-ns " // the child's report of its in-process poll-to-serving time
	layerPrefix   = "layer-bytes "    // the push child's report of the catalog image's layer size
	hwmPrefix     = "alm-vmhwm "      // the ALM child's report of its peak RSS (VmHWM of /proc/self/status)
)

// BenchOnly reports whether this test binary runs only benchmarks (-test.run=^$) or is a benchmark's child process:
// neither needs the local control plane, so TestMain does not start one.
func BenchOnly() bool {
	if os.Getenv(benchChildEnv) != "" {
		return true
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	run, bench := flag.Lookup("test.run"), flag.Lookup("test.bench")
	return run != nil && bench != nil && run.Value.String() == "^$" && bench.Value.String() != ""
}

// regCounts are the requests a registry answered and the bytes it sent (status line, the headers the registry
// set, body).
type regCounts struct {
	manifestHead, manifestGet, blobGet, other, bytes int64
}

func (c regCounts) sub(o regCounts) regCounts {
	return regCounts{c.manifestHead - o.manifestHead, c.manifestGet - o.manifestGet, c.blobGet - o.blobGet, c.other - o.other, c.bytes - o.bytes}
}

func (c regCounts) requests() int64 { return c.manifestHead + c.manifestGet + c.blobGet + c.other }

// countingRegistry is an OCI registry behind a handler that counts what it answers.
type countingRegistry struct {
	inner http.Handler
	mu    sync.Mutex
	n     regCounts
}

func (c *countingRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	cw := &countingWriter{ResponseWriter: w}
	c.inner.ServeHTTP(cw, req)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case strings.Contains(req.URL.Path, "/manifests/") && req.Method == http.MethodHead:
		c.n.manifestHead++
	case strings.Contains(req.URL.Path, "/manifests/") && req.Method == http.MethodGet:
		c.n.manifestGet++
	case strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet:
		c.n.blobGet++
	default:
		c.n.other++
	}
	c.n.bytes += cw.bytes
}

func (c *countingRegistry) counts() regCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// countingWriter counts the bytes of a response: status line, the headers set by the handler, body.
type countingWriter struct {
	http.ResponseWriter
	wroteHeader bool
	bytes       int64
}

func (w *countingWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		w.bytes += int64(len(fmt.Sprintf("HTTP/1.1 %d %s\r\n\r\n", code, http.StatusText(code))))
		for k, vs := range w.Header() {
			for _, v := range vs {
				w.bytes += int64(len(k) + len(v) + 4)
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// imageBenchEnv is the registry with the catalog image, shared by the benchmarks of one process.
type imageBenchEnv struct {
	reg                  *countingRegistry
	ref                  string // host/catalogs/bench:latest
	fbcBytes, layerBytes int64
}

var (
	imgEnvOnce sync.Once
	imgEnv     *imageBenchEnv
	imgEnvErr  error
)

// imageBench starts the registry and pushes the catalog image, once per process; the registry serves until the
// process exits. The catalog is generated and pushed by a child process, so this process's peak RSS stays below
// what the measured children use (see checkRSS).
func imageBench(b *testing.B) *imageBenchEnv {
	imgEnvOnce.Do(func() { imgEnv, imgEnvErr = startImageBench(b) })
	if imgEnvErr != nil {
		b.Fatal(imgEnvErr)
	}
	return imgEnv
}

func startImageBench(b *testing.B) (*imageBenchEnv, error) {
	env := &imageBenchEnv{reg: &countingRegistry{inner: ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))}}
	srv := httptest.NewServer(env.reg)
	env.ref = strings.TrimPrefix(srv.URL, "http://") + "/catalogs/bench:latest"
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"=push", benchRefEnv+"="+env.ref)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("pushing the catalog image: %w\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, layerPrefix); ok {
			env.layerBytes, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	err = filepath.WalkDir(imageBenchDir(), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		env.fbcBytes += info.Size()
		return err
	})
	return env, err
}

// pushCatalog generates the catalog (when not cached), builds its image and pushes it to ref; it prints the size of
// the image's layer.
func pushCatalog(ref string) error {
	dir, err := imageBenchCatalog()
	if err != nil {
		return err
	}
	img, err := image.CatalogImage(os.DirFS(dir))
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	size, err := layers[0].Size()
	if err != nil {
		return err
	}
	if _, err := image.Push(context.Background(), img, ref, image.Options{Insecure: true}); err != nil {
		return err
	}
	fmt.Printf("%s%d\n", layerPrefix, size)
	return nil
}

// benchSource is the CatalogSource of the benchmarks: the catalog image by tag, plain HTTP on loopback.
func benchSource(ref string) *operatorsv1alpha1.CatalogSource {
	return &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "alm", Name: "bench"},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Image: &operatorsv1alpha1.ImageSource{Ref: ref, Insecure: true}}}
}

// pollOnce is one poll of an image CatalogSource as Reconcile does it, up to the status it would write (the write to
// the API server is left out): loadImage (the digest; the pull, fbc.LoadFS and bundle tags only for a new digest),
// the registry's index, the catalog's status summary and status.image. It returns the summary and whether the
// contents were new.
func pollOnce(ctx context.Context, r *Reconciler, cs *operatorsv1alpha1.CatalogSource) (index.Status, bool, error) {
	load, err := r.loadImage(ctx, cs)
	if err != nil {
		return index.Status{}, false, err
	}
	key := client.ObjectKeyFromObject(cs)
	ix := r.Registry.Set(key, int(cs.Spec.Priority), load.contents, load.digest)
	summary := ix.Status(registry.Name(key))
	imageStatus(&cs.Status, load, load.contents != nil, metav1.Now())
	cs.Status.Packages, cs.Status.RejectedBundles = summary.Packages, summary.Rejected
	cs.Status.PackageCount, cs.Status.BundleCount = int32(len(summary.Packages)), int32(summary.Bundles)
	return summary, load.contents != nil, nil
}

// TestBenchChild is the body of a benchmark child process; it does nothing in a normal test run.
func TestBenchChild(t *testing.T) {
	ref := os.Getenv(benchRefEnv)
	switch os.Getenv(benchChildEnv) {
	case "alm-poll":
		serving, err := almPoll(ref)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%d\n", servingPrefix, serving.Nanoseconds())
		hwm, err := vmHWM(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%d\n", hwmPrefix, hwm)
	case "huge-poll":
		if err := hugePoll(ref); err != nil {
			t.Fatal(err)
		}
	case "push":
		if err := pushCatalog(ref); err != nil {
			t.Fatal(err)
		}
	default:
		t.Skip("only run as a benchmark child")
	}
}

// almPoll polls a new CatalogSource of ref to serving and returns the time it took.
func almPoll(ref string) (time.Duration, error) {
	r := &Reconciler{Registry: registry.New()}
	cs := benchSource(ref)
	start := time.Now()
	summary, _, err := pollOnce(context.Background(), r, cs)
	serving := time.Since(start)
	if err != nil {
		return 0, err
	}
	if want := imgBenchPackages * imgBenchVersions; summary.Bundles != want || summary.RejectedCount != 0 {
		return 0, fmt.Errorf("serving %d bundles with %d rejected, want %d and none", summary.Bundles, summary.RejectedCount, want)
	}
	runtime.GC()
	runtime.KeepAlive(r)
	return serving, nil
}

// procRun is one measured process.
type procRun struct {
	wall, cpu, serving time.Duration
	rss                int64 // peak resident set, bytes
	reqs               regCounts
}

// measure runs cmd (its standard output set by the caller) and returns its wall time, CPU time (user + system), peak
// RSS and what the registry answered it.
func measure(b *testing.B, env *imageBenchEnv, cmd *exec.Cmd, selfReported bool) procRun {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	before := env.reg.counts()
	start := time.Now()
	err := cmd.Run()
	run := procRun{wall: time.Since(start), reqs: env.reg.counts().sub(before)}
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	run.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	if !selfReported {
		checkRSS(b, cmd.Path, run.rss)
	}
	return run
}

// checkRSS fails the benchmark when a child's peak RSS cannot be told from this process's: Go starts a child with
// vfork (CLONE_VM) and exec, and Linux records the shared address space's high-water mark in the child's
// ru_maxrss at the exec, so a child's reported peak is at least this process's peak.
func checkRSS(b *testing.B, name string, rss int64) {
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if own := self.Maxrss * 1024; rss <= own {
		b.Fatalf("%s: peak RSS %d MiB is not above this process's own peak (%d MiB), so it is not the child's: run the "+
			"benchmark in a fresh process, before anything large is loaded in it (e.g. alone, -count=1)", name, rss>>20, own>>20)
	}
}

// runALM polls the catalog image to serving in a child process.
func runALM(b *testing.B, env *imageBenchEnv) procRun {
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"=alm-poll", benchRefEnv+"="+env.ref)
	var out bytes.Buffer
	cmd.Stdout = &out
	run := measure(b, env, cmd, true) // ALM's peak can be below this process's: the child reports its own VmHWM
	run.rss = 0
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), hwmPrefix); ok {
			if run.rss, _ = strconv.ParseInt(v, 10, 64); run.rss == 0 {
				b.Fatalf("the child reported its peak RSS as %q", v)
			}
		}
		if v, ok := strings.CutPrefix(sc.Text(), servingPrefix); ok {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			run.serving = time.Duration(ns)
		}
	}
	if run.serving == 0 {
		b.Fatalf("the child did not report its poll-to-serving time:\n%s", out.Bytes())
	}
	return run
}

// byteCount is an io.Writer that counts what is written to it.
type byteCount int64

func (c *byteCount) Write(p []byte) (int, error) { *c += byteCount(len(p)); return len(p), nil }

// runOPM renders the catalog image with opm in a fresh environment (no image cache of an earlier run), its output
// counted and discarded; the environment is removed afterwards.
func runOPM(b *testing.B, env *imageBenchEnv) procRun {
	dir, err := os.MkdirTemp("", "alm-bench-opm-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := opm.Command(b.Context(), b, dir, "render", "--use-http", env.ref, "-o", "json")
	var out byteCount
	cmd.Stdout = &out
	run := measure(b, env, cmd, false)
	if int64(out) < env.fbcBytes*9/10 { // it writes the catalog back, in the format it was written in
		b.Fatalf("opm render printed %d bytes of a %d-byte catalog", out, env.fbcBytes)
	}
	return run
}

func benchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("ALM_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// BenchmarkCatalogImage10k measures a poll of a new image CatalogSource to serving the 10,000-bundle catalog beside
// opm render of the same image, each a process of its own: wall time, peak RSS and CPU time, and the registry's
// requests and bytes for each. The two run interleaved, ALM_BENCH_ROUNDS times (default 3) per iteration; the
// fastest round of each counts (peak RSS: the highest), so a neighbour's load on a shared machine disturbs both
// alike. alm-serving-ms is the poll's time inside the ALM process (what a running loop takes, no process start).
func BenchmarkCatalogImage10k(b *testing.B) {
	opm.Path(b) // fails at once, saying `make tools` builds it, when bin/opm is missing
	env := imageBench(b)
	rounds := benchRounds()
	best, peak := map[string]procRun{}, map[string]int64{}
	var serving time.Duration
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, m := range []struct {
				mode string
				run  func(*testing.B, *imageBenchEnv) procRun
			}{{"opm", runOPM}, {"alm", runALM}} {
				mode, got := m.mode, m.run(b, env)
				if old, ok := best[mode]; !ok || got.wall < old.wall {
					best[mode] = got
				}
				peak[mode] = max(peak[mode], got.rss)
				if mode == "alm" && (serving == 0 || got.serving < serving) {
					serving = got.serving
				}
			}
		}
	}
	reportImage10k(b, env, best, peak, serving, rounds*b.N)
}

// reportImage10k logs the comparison and reports its metrics.
func reportImage10k(b *testing.B, env *imageBenchEnv, best map[string]procRun, peak map[string]int64, serving time.Duration, rounds int) {
	const mib = 1 << 20
	b.Logf("catalog image %s: %d bundles, %.1f MiB of FBC JSON, one %.1f MiB layer; GOMAXPROCS=%d, fastest of %d rounds",
		env.ref, imgBenchPackages*imgBenchVersions, float64(env.fbcBytes)/mib, float64(env.layerBytes)/mib, runtime.GOMAXPROCS(0), rounds)
	b.Logf("%-4s %10s %12s %10s %12s  %s", "", "wall", "peak RSS", "CPU", "received", "requests")
	for _, mode := range []string{"alm", "opm"} {
		run := best[mode]
		b.Logf("%-4s %10s %8.1f MiB %10s %8.1f MiB  %d (manifest HEAD %d, manifest GET %d, blob GET %d, other %d)", mode,
			run.wall.Round(time.Millisecond), float64(peak[mode])/mib, run.cpu.Round(time.Millisecond), float64(run.reqs.bytes)/mib,
			run.reqs.requests(), run.reqs.manifestHead, run.reqs.manifestGet, run.reqs.blobGet, run.reqs.other)
		b.ReportMetric(float64(run.wall.Milliseconds()), mode+"-wall-ms")
		b.ReportMetric(float64(peak[mode])/mib, mode+"-peak-RSS-MiB")
		b.ReportMetric(float64(run.cpu.Milliseconds()), mode+"-cpu-ms")
		b.ReportMetric(float64(run.reqs.requests()), mode+"-requests")
		b.ReportMetric(float64(run.reqs.bytes)/mib, mode+"-MiB-received")
	}
	b.Logf("alm poll to serving inside the process: %s", serving.Round(time.Millisecond))
	b.ReportMetric(float64(serving.Milliseconds()), "alm-serving-ms")
	b.ReportMetric(float64(best["alm"].wall)/float64(best["opm"].wall), "wall/opm")
	b.ReportMetric(float64(peak["alm"])/float64(peak["opm"]), "RSS/opm")
	b.ReportMetric(float64(best["alm"].cpu)/float64(best["opm"].cpu), "cpu/opm")
	b.ReportMetric(float64(env.fbcBytes)/mib, "catalog-MiB")
	b.ReportMetric(float64(env.layerBytes)/mib, "layer-MiB")
}

var (
	polledOnce sync.Once
	polled     *Reconciler
	polledErr  error
)

// BenchmarkCatalogImageUnchangedPoll measures the poll of an image CatalogSource whose digest did not change, by a
// loop that already polled it once (one client per CatalogSource, kept by the loop): the requests the registry
// answered per poll (manifest, blob, other), the bytes it sent, and the time of the loop's work (ns/op).
func BenchmarkCatalogImageUnchangedPoll(b *testing.B) {
	env := imageBench(b)
	polledOnce.Do(func() {
		polled = &Reconciler{Registry: registry.New()}
		_, _, polledErr = pollOnce(context.Background(), polled, benchSource(env.ref))
	})
	if polledErr != nil {
		b.Fatal(polledErr)
	}
	cs := benchSource(env.ref)
	ctx := context.Background()
	before := env.reg.counts()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		summary, changed, err := pollOnce(ctx, polled, cs)
		if err != nil || changed || summary.Bundles != imgBenchPackages*imgBenchVersions {
			b.Fatalf("unchanged poll: changed %v, %d bundles, %v", changed, summary.Bundles, err)
		}
	}
	b.StopTimer()
	got, n := env.reg.counts().sub(before), float64(b.N)
	b.ReportMetric(float64(got.requests())/n, "requests/poll")
	b.ReportMetric(float64(got.manifestHead+got.manifestGet)/n, "manifest-requests/poll")
	b.ReportMetric(float64(got.manifestGet)/n, "manifest-GETs/poll")
	b.ReportMetric(float64(got.blobGet)/n, "blob-requests/poll")
	b.ReportMetric(float64(got.other)/n, "other-requests/poll")
	b.ReportMetric(float64(got.bytes)/n, "bytes/poll")
}
