package index

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/test/corpus"
)

// The bundle-directory benchmark: a synthetic corpus of real-sized bundles (test/corpus), loaded in one
// run by `almctl catalog render` (fbc.LoadDirWith + New + WriteCatalog), by the CatalogSource load (fbc.LoadDir +
// New) and by operator-registry's render of bundle directories. Each load runs in its own process, so wall
// time and peak RSS are what a user measures with /usr/bin/time.
//
// operator-registry v1.64.0's alpha/action.Render does not build with our pinned dependencies: it needs ~60 more
// modules (containerd, podman image and storage, sqlite) and libgpgme (cgo) or the containers_image_openpgp build
// tag. opmRender does exactly what action.Render does for a bundle-directory reference (renderBundleDirectory:
// registry.NewImageInput, then bundleToDeclcfg: registry.ObjectsAndPropertiesFromBundle and the CSV's JSON), for
// each directory in turn as opm does, then declcfg.WriteJSON; it skips creating the image registry that
// action.Render makes and never uses for directories.

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
	case "opm-render":
		err = opmRender(dir, io.Discard)
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

// opmRender is operator-registry's render of every bundle directory under dir (see the file comment).
func opmRender(dir string, w io.Writer) error {
	var refs []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && isBundleDir(path) {
			refs = append(refs, path)
			return filepath.SkipDir
		}
		return err
	})
	if err != nil {
		return err
	}
	cfg := &declcfg.DeclarativeConfig{}
	for _, ref := range refs {
		img, err := registry.NewImageInput(image.SimpleReference(""), ref)
		if err != nil {
			return err
		}
		objs, props, err := registry.ObjectsAndPropertiesFromBundle(img.Bundle)
		if err != nil {
			return err
		}
		var csvJSON []byte
		for _, o := range img.Bundle.Objects {
			if o.GetKind() == "ClusterServiceVersion" {
				if csvJSON, err = json.Marshal(o); err != nil {
					return err
				}
			}
		}
		cfg.Merge(&declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{{Schema: declcfg.SchemaBundle, Name: img.Bundle.Name,
			Package: img.Bundle.Package, Properties: props, Objects: objs, CsvJSON: string(csvJSON)}}})
	}
	return declcfg.WriteJSON(*cfg, w)
}

// childRun runs one mode in a child process and returns its wall time, peak RSS and CPU time (user + system).
func childRun(b *testing.B, mode, dir string) (time.Duration, int64, time.Duration) {
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"="+mode, benchDirEnv+"="+dir)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", mode, err, out)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return wall, 0, 0
	}
	return wall, ru.Maxrss * 1024, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() // Linux reports KiB
}

// BenchmarkBundleDirs measures, side by side in one run, almctl catalog render and the CatalogSource load of a
// directory of real-sized bundles against operator-registry's render of the same directories: wall time and peak
// RSS per process, and the ratios ALM/opm (the target is at most 0.5 for both). The three loads run interleaved,
// ALM_BENCH_ROUNDS times (default 3) per iteration, and the fastest round of each counts, so a neighbour's load on
// a shared machine disturbs all three alike.
func BenchmarkBundleDirs(b *testing.B) {
	dir := bundleCorpus(b)
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("ALM_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	modes := []string{"opm-render", "alm-render", "alm-load"}
	best := map[string]time.Duration{}
	cpu := map[string]time.Duration{} // of the fastest round
	peak := map[string]int64{}
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, mode := range modes {
				wall, rss, used := childRun(b, mode, dir)
				if best[mode] == 0 || wall < best[mode] {
					best[mode], cpu[mode] = wall, used
				}
				peak[mode] = max(peak[mode], rss)
			}
		}
	}
	opmWall, opmRSS := float64(best["opm-render"]), float64(peak["opm-render"])
	b.Logf("%d bundle directories (%s), GOMAXPROCS=%d, fastest of %d rounds", benchBundleCount(), dir, runtime.GOMAXPROCS(0), rounds*b.N)
	b.Logf("%-11s %10s %8s %14s %8s %10s %8s", "load", "wall", "/opm", "peak RSS", "/opm", "CPU", "/opm")
	for _, mode := range modes {
		b.Logf("%-11s %10s %8.2f %10.1f MiB %8.2f %10s %8.2f", mode, best[mode].Round(time.Millisecond), float64(best[mode])/opmWall,
			float64(peak[mode])/(1<<20), float64(peak[mode])/opmRSS, cpu[mode].Round(time.Millisecond), float64(cpu[mode])/float64(cpu["opm-render"]))
		b.ReportMetric(float64(best[mode].Milliseconds()), mode+"-wall-ms")
		b.ReportMetric(float64(peak[mode])/(1<<20), mode+"-peak-RSS-MiB")
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
