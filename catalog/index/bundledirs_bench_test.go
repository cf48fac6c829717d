package index

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/test/corpus"
	"github.com/almproject/alm/test/opm"
)

// The bundle-directory benchmark: a synthetic corpus of real-sized bundles (test/corpus), rendered in one run by
// `almctl catalog render` (built from cmd/almctl) and by `opm render` (bin/opm, operator-registry v1.64.0 built from
// its pinned module by `make tools`) of every bundle directory, and loaded by the CatalogSource load (fbc.LoadDir +
// New, in a child of the test binary). Each is a process of its own, so wall time and peak RSS are what a user
// measures with /usr/bin/time; both renders' output is read back and must hold every bundle.

const (
	benchChildEnv = "ALM_BENCH_CHILD"
	benchDirEnv   = "ALM_BENCH_DIR"
)

func benchBundleCount() int {
	if n, err := strconv.Atoi(os.Getenv("ALM_BENCH_BUNDLES")); err == nil && n > 0 {
		return n
	}
	return 300
}

var (
	corpusOnce sync.Once
	corpusDir  string
	corpusErr  error
)

// bundleCorpus returns the corpus directory (packages of 3 versions, 3 CRDs each), generated once and cached in the
// temporary directory across runs.
func bundleCorpus(b *testing.B) string {
	corpusOnce.Do(func() {
		n := benchBundleCount()
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("alm-bundle-corpus-%d-v1", n))
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			corpusDir = dir
			return
		}
		_ = os.RemoveAll(dir)
		if _, corpusErr = corpus.Generate(filepath.Join(dir, "bundles"), corpus.Options{Packages: (n + 2) / 3, Versions: 3, CRDs: 3, Seed: 1}); corpusErr != nil {
			return
		}
		corpusErr = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		corpusDir = dir
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return filepath.Join(corpusDir, "bundles")
}

// TestBenchChild is the body of a benchmark child process; it does nothing in a normal test run.
func TestBenchChild(t *testing.T) {
	mode, dir := os.Getenv(benchChildEnv), os.Getenv(benchDirEnv)
	if mode == "" {
		t.Skip("only run as a benchmark child")
	}
	var err error
	switch mode {
	case "alm-render":
		err = almRender(dir, io.Discard)
	case "alm-load":
		err = almLoad(dir)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// almRender is `almctl catalog render DIR`.
func almRender(dir string, w io.Writer) error {
	contents, err := fbc.LoadDirWith(dir, fbc.LoadOptions{ForRender: true})
	if err != nil {
		return err
	}
	ix := New(Catalog{Name: dir, Contents: contents})
	if bundle.HasErrors(ix.Problems()) {
		return fmt.Errorf("corpus has errors: %v", ix.Problems()[0])
	}
	return ix.WriteCatalog("", "json", w)
}

// almLoad is the CatalogSource load of a directory: the index, kept for serving.
func almLoad(dir string) error {
	contents, err := fbc.LoadDir(dir)
	if err != nil {
		return err
	}
	ix := New(Catalog{Name: dir, Contents: contents})
	if len(ix.PackageNames()) == 0 {
		return fmt.Errorf("empty index")
	}
	runtime.GC()
	runtime.KeepAlive(ix)
	return nil
}

// bundleDirs lists the bundle directories under dir, as fbc.LoadDir finds them: what `opm render` is given.
func bundleDirs(b *testing.B, dir string) []string {
	var refs []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && isBundleDir(path) {
			refs = append(refs, path)
			return filepath.SkipDir
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return refs
}

// buildAlmctl builds cmd/almctl into a temporary directory.
func buildAlmctl(b *testing.B) string {
	out := filepath.Join(b.TempDir(), "almctl")
	cmd := exec.CommandContext(b.Context(), "go", "build", "-o", out, "./cmd/almctl")
	cmd.Dir = "../.."
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building almctl: %v\n%s", err, msg)
	}
	return out
}

// bundleCounter counts the olm.bundle documents of a File-Based Catalog written through it, in any JSON spacing.
type bundleCounter struct {
	carry   []byte
	bundles int
}

var bundleSchema = regexp.MustCompile(`"schema":\s*"olm\.bundle"`)

func (c *bundleCounter) Write(p []byte) (int, error) {
	buf := append(c.carry, p...)
	matches := bundleSchema.FindAllIndex(buf, -1)
	c.bundles += len(matches)
	from := max(0, len(buf)-32) // a match is shorter: one cut by the chunk's end is found with the next chunk
	if len(matches) > 0 {
		from = max(from, matches[len(matches)-1][1]) // never count a match twice
	}
	c.carry = append(c.carry[:0], buf[from:]...)
	return len(p), nil
}

// procRun runs cmd to its end and returns its wall time, peak RSS and CPU time (user + system). The peak RSS is the
// process's VmHWM, read from /proc every 5 ms while it runs (the high-water mark of its own memory since its exec):
// ru_maxrss would not do, since Go starts a child with vfork and Linux records the parent's high-water mark in the
// child's ru_maxrss at exec.
func procRun(b *testing.B, name string, cmd *exec.Cmd) (time.Duration, int64, time.Duration) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	hwm := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > peak {
				peak = v
			}
			select {
			case <-done:
				hwm <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	peak := <-hwm
	if err != nil {
		b.Fatalf("%s: %v\n%s", name, err, stderr.Bytes())
	}
	return wall, peak, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// vmHWM is the peak RSS of process pid so far (VmHWM in /proc/pid/status), or 0 once it has exited.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib * 1024
		}
	}
	return 0
}

// renderRun runs a render to its end (procRun) and fails unless it wrote every one of the want bundles.
func renderRun(b *testing.B, name string, cmd *exec.Cmd, want int) (time.Duration, int64, time.Duration) {
	counter := &bundleCounter{}
	cmd.Stdout = counter
	wall, rss, cpu := procRun(b, name, cmd)
	if counter.bundles != want {
		b.Fatalf("%s wrote %d olm.bundle documents, want %d", name, counter.bundles, want)
	}
	return wall, rss, cpu
}

// BenchmarkBundleDirs measures, side by side in one run, `almctl catalog render` and the CatalogSource load of a
// directory of real-sized bundles against `opm render` of the same directories: wall time, peak RSS and CPU time
// per process, and the ratios ALM/opm. The three run interleaved, ALM_BENCH_ROUNDS times (default 3) per iteration,
// and the fastest round of each counts, so a neighbour's load on a shared machine disturbs all three alike.
func BenchmarkBundleDirs(b *testing.B) {
	dir := bundleCorpus(b)
	refs := bundleDirs(b, dir)
	almctl := buildAlmctl(b)
	opm.Path(b) // fails at once, saying `make tools` builds it, when bin/opm is missing
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("ALM_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	run := map[string]func() (time.Duration, int64, time.Duration){
		"opm-render": func() (time.Duration, int64, time.Duration) {
			args := append(append([]string{"render"}, refs...), "-o", "json")
			return renderRun(b, "opm render", opm.Command(b.Context(), b, b.TempDir(), args...), len(refs))
		},
		"alm-render": func() (time.Duration, int64, time.Duration) {
			cmd := exec.CommandContext(b.Context(), almctl, "catalog", "render", dir, "-o", "json")
			return renderRun(b, "almctl catalog render", cmd, len(refs))
		},
		"alm-load": func() (time.Duration, int64, time.Duration) {
			cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), benchChildEnv+"=alm-load", benchDirEnv+"="+dir)
			return procRun(b, "alm-load", cmd)
		},
	}
	modes := []string{"opm-render", "alm-render", "alm-load"}
	best := map[string]time.Duration{}
	cpu := map[string]time.Duration{} // of the fastest round
	peak := map[string]int64{}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, mode := range modes {
				wall, rss, used := run[mode]()
				if best[mode] == 0 || wall < best[mode] {
					best[mode], cpu[mode] = wall, used
				}
				peak[mode] = max(peak[mode], rss)
			}
		}
	}
	opmWall, opmRSS := float64(best["opm-render"]), float64(peak["opm-render"])
	b.Logf("%d bundle directories (%s), GOMAXPROCS=%d, fastest of %d rounds; peak RSS is each process's VmHWM",
		len(refs), dir, runtime.GOMAXPROCS(0), rounds*b.N)

	b.Logf("%-11s %10s %8s %14s %8s %10s %8s", "process", "wall", "/opm", "peak RSS", "/opm", "CPU", "/opm")
	for _, mode := range modes {
		b.Logf("%-11s %10s %8.2f %10.1f MiB %8.2f %10s %8.2f", mode, best[mode].Round(time.Millisecond), float64(best[mode])/opmWall,
			float64(peak[mode])/(1<<20), float64(peak[mode])/opmRSS, cpu[mode].Round(time.Millisecond), float64(cpu[mode])/float64(cpu["opm-render"]))
		b.ReportMetric(float64(best[mode].Milliseconds()), mode+"-wall-ms")
		b.ReportMetric(float64(peak[mode])/(1<<20), mode+"-peak-RSS-MiB")
		b.ReportMetric(float64(cpu[mode].Milliseconds()), mode+"-cpu-ms")
	}
	b.ReportMetric(float64(best["alm-render"])/opmWall, "render-wall/opm")
	b.ReportMetric(float64(peak["alm-render"])/opmRSS, "render-RSS/opm")
	b.ReportMetric(float64(best["alm-load"])/opmWall, "load-wall/opm")
	b.ReportMetric(float64(peak["alm-load"])/opmRSS, "load-RSS/opm")
}

// isBundleDir reports whether dir is a registry+v1 bundle directory, as fbc.LoadDir finds them.
func isBundleDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "manifests")); err == nil && fi.IsDir() {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "metadata", "annotations.yaml"))
	return err == nil
}
