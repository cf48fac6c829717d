package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/model"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/test/corpus"
)

const (
	benchPackages = 500
	benchVersions = 20
	benchLayout   = "v1" // bump when genCatalog changes, so the cached directory is regenerated
)

var (
	benchDirOnce sync.Once
	benchDir     string
	benchDirErr  error
)

// benchCatalog returns a File-Based Catalog of 500 packages x 20 versions on disk, generated once and cached in
// the temporary directory across runs.
func benchCatalog(b *testing.B) string {
	benchDirOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("alm-catalog-bench-%d-%d-%s", benchPackages, benchVersions, benchLayout))
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			benchDir = dir
			return
		}
		_ = os.RemoveAll(dir)
		if err := genCatalog(dir, benchPackages, benchVersions); err != nil {
			benchDirErr = err
			return
		}
		benchDirErr = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		benchDir = dir
	})
	if benchDirErr != nil {
		b.Fatal(benchDirErr)
	}
	return benchDir
}

// genCatalog writes one catalog.json per package: a stable channel with a replaces chain; every new minor version
// skipRanges the previous minor; every x.y.3 hotfix replaces x.y.1 and skips x.y.2; a fast channel with the newest
// five versions. Each bundle provides one kind and, for every other package, requires the previous package's kind.
func genCatalog(dir string, packages, versions int) error {
	for p := 0; p < packages; p++ {
		pkg := fmt.Sprintf("pkg-%03d", p)
		name := func(i int) string { return fmt.Sprintf("%s.v%s", pkg, ver(i)) }
		var docs []any
		docs = append(docs, declcfg.Package{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: "stable"})
		stable, fast := corpus.Channels(pkg, versions, name)
		docs = append(docs, stable, fast)
		for i := 0; i < versions; i++ {
			props := []map[string]any{
				{"type": "olm.package", "value": map[string]string{"packageName": pkg, "version": ver(i)}},
				{"type": "olm.gvk", "value": map[string]string{"group": pkg + ".example.com", "version": "v1", "kind": fmt.Sprintf("Kind%03d", p)}},
			}
			if p%2 == 1 {
				props = append(props, map[string]any{"type": "olm.gvk.required", "value": map[string]string{
					"group": fmt.Sprintf("pkg-%03d.example.com", p-1), "version": "v1", "kind": fmt.Sprintf("Kind%03d", p-1)}})
			}
			docs = append(docs, map[string]any{"schema": "olm.bundle", "name": name(i), "package": pkg,
				"image": fmt.Sprintf("example.com/%s/bundle:v%s", pkg, ver(i)), "properties": props})
		}
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, pkg, "catalog.json"))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		enc.SetIndent("", "    ")
		for _, d := range docs {
			if err := enc.Encode(d); err != nil {
				f.Close()
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func ver(i int) string { return fmt.Sprintf("1.%d.%d", i/5, i%5) }

func loadOurs(b *testing.B, dir string) *Index {
	c, err := fbc.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	ix := New(Catalog{Name: "bench", Contents: c})
	if len(ix.Problems()) != 0 {
		b.Fatalf("unexpected problems: %v", ix.Problems()[:1])
	}
	return ix
}

func loadOLM(b *testing.B, dir string) model.Model {
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(dir))
	if err != nil {
		b.Fatal(err)
	}
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// heapAfter returns the live heap growth, in bytes, of what load returns.
func heapAfter[T any](load func() T) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// cpuTime returns the CPU time (user + system) used so far by the process (who = syscall.RUSAGE_SELF) or by the
// calling thread (who = rusageThread, Linux only). On a shared machine it is steadier than wall time.
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rusageThread = 1 // RUSAGE_THREAD on Linux

// BenchmarkLoadIndex10k measures, in the same run, ALM's load + index of a 10,000-bundle File-Based Catalog on
// disk beside operator-registry's declcfg.LoadFS + declcfg.ConvertToModel on the same files, and the live heap
// each keeps. Metrics: alm-ms/op and olm-ms/op (wall time), alm/olm (wall time ratio), alm-cpu-ms/op and
// olm-cpu-ms/op (process CPU time, both load files concurrently), alm-heap-MB and olm-heap-MB.
func BenchmarkLoadIndex10k(b *testing.B) {
	dir := benchCatalog(b)
	var ours, theirs, oursCPU, theirCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		start, cpu := time.Now(), cpuTime(syscall.RUSAGE_SELF)
		ix := loadOurs(b, dir)
		ours += time.Since(start)
		oursCPU += cpuTime(syscall.RUSAGE_SELF) - cpu
		runtime.KeepAlive(ix)

		runtime.GC()
		start, cpu = time.Now(), cpuTime(syscall.RUSAGE_SELF)
		m := loadOLM(b, dir)
		theirs += time.Since(start)
		theirCPU += cpuTime(syscall.RUSAGE_SELF) - cpu
		runtime.KeepAlive(m)
	}
	b.StopTimer()
	oursHeap := heapAfter(func() *Index { return loadOurs(b, dir) })
	theirHeap := heapAfter(func() model.Model { return loadOLM(b, dir) })
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 / n }
	b.ReportMetric(ms(ours), "alm-ms/op")
	b.ReportMetric(ms(theirs), "olm-ms/op")
	b.ReportMetric(float64(ours)/float64(theirs), "alm/olm")
	b.ReportMetric(ms(oursCPU), "alm-cpu-ms/op")
	b.ReportMetric(ms(theirCPU), "olm-cpu-ms/op")
	b.ReportMetric(float64(oursHeap)/1e6, "alm-heap-MB")
	b.ReportMetric(float64(theirHeap)/1e6, "olm-heap-MB")
}

// BenchmarkResolve10k measures one resolution on the 10,000-bundle index: an upgrade from a version in the middle
// of a 20-version channel with a range (the heavier case). cpu-ns/op is the thread's CPU time per call (Linux).
func BenchmarkResolve10k(b *testing.B) {
	ix := loadOurs(b, benchCatalog(b))
	reqs := make([]Request, benchPackages)
	for p := range reqs {
		reqs[p] = Request{Package: fmt.Sprintf("pkg-%03d", p), From: ver(p % (benchVersions - 1)), Range: "<2.0.0"}
	}
	if r, err := ix.Resolve(reqs[3]); err != nil || r.Chosen == nil {
		b.Fatalf("resolve: %v %+v", err, r)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(rusageThread)
	for i := 0; i < b.N; i++ {
		if _, err := ix.Resolve(reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
	}
	if runtime.GOOS == "linux" {
		b.ReportMetric(float64(cpuTime(rusageThread)-cpu)/float64(b.N), "cpu-ns/op")
	}
}
