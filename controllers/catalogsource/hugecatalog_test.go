package catalogsource

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/registry"
)

// The memory test of huge catalog images: a catalog image holding 2 GiB uncompressed (highly compressible, so its
// one gzip layer is a few MiB, generated in memory and served by go-containerregistry's registry on loopback) is
// polled to serving by the loop's own code (pollOnce) in a child process, whose peak resident set (VmHWM of
// /proc/<pid>/status, read while the child waits after the poll) must stay under the memory limit config/manager
// gives ALM.

const (
	hugeShapeEnv   = "ALM_HUGE_SHAPE"   // the child's catalog shape (hugeShapes)
	hugeScratchEnv = "ALM_HUGE_SCRATCH" // the child's scratch directory
	hugeReady      = "huge-poll-done "  // the child's report that it polled, with the outcome
	almMemoryLimit = 512 << 20          // config/manager: resources.limits.memory of the manager container
	hugeFiles      = 2<<30 - 1<<20      // bytes of files in the 2 GiB images (the rest of 2 GiB: tar headers)
	hugeFBCBytes   = 64 << 20           // of which File-Based Catalog documents of a schema ALM skips
	hugePieceBytes = 255 << 20          // the largest file of the "many" shape (under the 256 MiB per-file limit)
	hugeDocBytes   = 1 << 20            // one padding document
)

// hugeShapes are the catalogs measured: "many" files (2 GiB under /configs: a real package, 64 MiB of FBC documents
// of another schema, the rest in files that are not FBC files, which opm and ALM ignore), "one" huge file (refused
// by the per-file limit before its content is read), "doc": a file that is one FBC document as large as the
// per-file limit allows (refused by the per-document limit, the rest of the catalog served), "json" and "yaml": a
// document just under the per-document limit, the most one document can make the parser hold, and "tiny": 96 MiB of
// minimal bundle documents, cut off at the document limit.
var hugeShapes = map[string]struct {
	want   string // "serving ...", or the refusal rule
	layers func(*tar.Writer) error
}{
	"many": {"serving 1 bundles, 0 rejected", writeManyFiles},
	"one": {image.RuleFileSize, func(tw *tar.Writer) error {
		return writePadding(tw, "configs/catalog.json", hugeFiles, false)
	}},
	"doc":  {"serving 1 bundles, 1 rejected", withDoc(image.DefaultCatalogLimits().MaxFileSize-1<<20, false)},
	"json": {"serving 1 bundles, 0 rejected", withDoc(fbc.DefaultMaxDocumentBytes-64<<10, false)},
	"yaml": {"serving 1 bundles, 0 rejected", withDoc(fbc.DefaultMaxDocumentBytes-64<<10, true)},
	"tiny": {fmt.Sprintf("serving %d bundles, 1 rejected", fbc.DefaultMaxDocuments-2), writeTinyBundles},
}

// writeTinyBundles writes 96 MiB of minimal olm.bundle documents (about 400,000) after the package p: what the
// parser keeps of each document stays in memory, so their number is what is bounded (fbc.DefaultMaxDocuments).
func writeTinyBundles(tw *tar.Writer) error {
	var b bytes.Buffer
	b.WriteString(hugeFBC)
	for i := 0; b.Len() < 96<<20; i++ {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","package":"p","name":"p.v0.0.%d","image":"registry.example/p@sha256:`+
			`0000000000000000000000000000000000000000000000000000000000000000","properties":[{"type":"olm.package",`+
			`"value":{"packageName":"p","version":"0.0.%d"}}]}`+"\n", i, i)
	}
	return writeFile(tw, "configs/p/catalog.json", b.Bytes())
}

// withDoc writes the real package and a file that is one padding document of size bytes.
func withDoc(size int64, yaml bool) func(*tar.Writer) error {
	return func(tw *tar.Writer) error {
		if err := writeFile(tw, "configs/p/catalog.json", []byte(hugeFBC)); err != nil {
			return err
		}
		if yaml {
			return writeDoc(tw, "configs/padding.yaml", "schema: alm.test.padding\ndata: ", "\n", size)
		}
		return writeDoc(tw, "configs/padding.json", `{"schema":"alm.test.padding","data":"`, "\"}\n", size)
	}
}

// hugeFBC is one package with one bundle whose image is pinned.
const hugeFBC = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"registry.example/p@sha256:0000000000000000000000000000000000000000000000000000000000000000","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

func writeManyFiles(tw *tar.Writer) error {
	if err := writeFile(tw, "configs/p/catalog.json", []byte(hugeFBC)); err != nil {
		return err
	}
	left := int64(hugeFiles - len(hugeFBC))
	for i := 0; i < 4; i++ {
		if err := writePadding(tw, fmt.Sprintf("configs/padding/docs-%d.json", i), hugeFBCBytes/4, true); err != nil {
			return err
		}
		left -= hugeFBCBytes / 4
	}
	for i := 0; left > 0; i++ {
		n := min(left, hugePieceBytes)
		if err := writePadding(tw, fmt.Sprintf("configs/padding/blob-%02d.txt", i), n, false); err != nil {
			return err
		}
		left -= n
	}
	return nil
}

func writeFile(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// paddingDoc is a File-Based Catalog document of a schema ALM (and opm) skips, hugeDocBytes long.
var paddingDoc = []byte(`{"schema":"alm.test.padding","data":"` + strings.Repeat("a", hugeDocBytes-40) + "\"}\n")

// writePadding writes a file of size bytes: padding documents (docs) or lines of "a".
func writePadding(tw *tar.Writer, name string, size int64, docs bool) error {
	chunk := paddingDoc
	if !docs {
		chunk = []byte(strings.Repeat(strings.Repeat("a", 1023)+"\n", hugeDocBytes/1024))
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		return err
	}
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := tw.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			return err
		}
	}
	return nil
}

// writeDoc writes a file of size bytes that is one padding document: head, "a"s, tail.
func writeDoc(tw *tar.Writer, name, head, tail string, size int64) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, head); err != nil {
		return err
	}
	a := bytes.Repeat([]byte("a"), 1<<20)
	for left := size - int64(len(head)+len(tail)); left > 0; left -= int64(len(a)) {
		if _, err := tw.Write(a[:min(left, int64(len(a)))]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(tw, tail)
	return err
}

// memLayer is a gzip layer held in memory, with its digests computed while it was written (go-containerregistry's
// own layers would decompress it again to learn its diff ID).
type memLayer struct {
	gz           []byte
	digest, diff v1.Hash
	uncompressed int64
}

func (l *memLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error)            { return l.diff, nil }
func (l *memLayer) Size() (int64, error)                { return int64(len(l.gz)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.gz)), nil
}
func (l *memLayer) Uncompressed() (io.ReadCloser, error) { return nil, errors.New("not kept") }

// countingHash counts what it hashes.
type countingHash struct {
	hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) { c.n += int64(len(p)); return c.Hash.Write(p) }

// hugeLayer generates a layer in memory: write's tar stream, gzipped at the fastest level.
func hugeLayer(write func(*tar.Writer) error) (*memLayer, error) {
	var buf bytes.Buffer
	gz, err := kgzip.NewWriterLevel(&buf, kgzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	diff := &countingHash{Hash: sha256.New()}
	tw := tar.NewWriter(io.MultiWriter(gz, diff))
	if err := write(tw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &memLayer{gz: buf.Bytes(), uncompressed: diff.n,
		digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])},
		diff:   v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff.Sum(nil))}}, nil
}

// TestHugeCatalogImageMemoryBounded polls catalog images holding 2 GiB uncompressed in a child process each and
// asserts that the child's peak RSS stays under ALM's memory limit: the catalog is streamed to disk and parsed one
// file (one document) at a time, and the scratch directory is empty afterwards.
func TestHugeCatalogImageMemoryBounded(t *testing.T) {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, shape := range []string{"many", "one", "doc", "json", "yaml", "tiny"} {
		t.Run(shape, func(t *testing.T) {
			start := time.Now()
			layer, err := hugeLayer(hugeShapes[shape].layers)
			if err != nil {
				t.Fatal(err)
			}
			img, err := mutate.AppendLayers(empty.Image, layer)
			if err != nil {
				t.Fatal(err)
			}
			ref := host + "/catalogs/huge-" + shape + ":1"
			if _, err := image.Push(t.Context(), img, ref, image.Options{Insecure: true}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: a layer of %.1f MiB holding %.1f MiB uncompressed, generated and pushed in %s", shape,
				float64(len(layer.gz))/(1<<20), float64(layer.uncompressed)/(1<<20), time.Since(start).Round(time.Millisecond))
			scratch := t.TempDir()
			start = time.Now()
			outcome, hwm := runHugePoll(t, ref, shape, scratch)
			t.Logf("%s: %s in %s; peak RSS (VmHWM) of the polling process %.1f MiB, limit %d MiB", shape, outcome,
				time.Since(start).Round(time.Millisecond), float64(hwm)/(1<<20), almMemoryLimit>>20)
			if want := hugeShapes[shape].want; !strings.Contains(outcome, want) {
				t.Errorf("%s: the poll ended %q, want %q", shape, outcome, want)
			}
			if hwm >= almMemoryLimit {
				t.Errorf("%s: peak RSS %d MiB, over ALM's memory limit of %d MiB", shape, hwm>>20, almMemoryLimit>>20)
			}
			if left, _ := os.ReadDir(scratch); len(left) != 0 {
				t.Errorf("%s: the scratch directory holds %v after the poll", shape, left)
			}
		})
	}
}

// runHugePoll runs the poll of ref in a child process and returns its outcome line and peak RSS, read from
// /proc/<pid>/status while the child waits for its standard input to close.
func runHugePoll(t *testing.T, ref, shape, scratch string) (string, int64) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), benchChildEnv+"=huge-poll", benchRefEnv+"="+ref, hugeShapeEnv+"="+shape,
		hugeScratchEnv+"="+scratch)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome := ""
	sc := bufio.NewScanner(stdout)
	for outcome == "" && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if v, ok := strings.CutPrefix(sc.Text(), hugeReady); ok {
			outcome = v
		}
	}
	hwm, herr := vmHWM(cmd.Process.Pid)
	_ = stdin.Close()
	_, _ = io.Copy(&out, stdout)
	if err := cmd.Wait(); err != nil || outcome == "" || herr != nil {
		t.Fatalf("child: %v, %v\n%s%s", err, herr, out.String(), stderr.String())
	}
	return outcome, hwm
}

// vmHWM reads a process's peak resident set size from /proc/<pid>/status.
func vmHWM(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/<pid>/status")
}

// hugePoll is the child of TestHugeCatalogImageMemoryBounded: it polls ref to serving as the loop does, reports the
// outcome, and waits until its standard input closes, so that the parent reads its peak RSS.
func hugePoll(ref string) error {
	r := &Reconciler{Registry: registry.New(), Images: &imagepull.Clients{ScratchDir: os.Getenv(hugeScratchEnv)}}
	summary, _, err := pollOnce(context.Background(), r, benchSource(ref))
	outcome := fmt.Sprintf("serving %d bundles, %d rejected", summary.Bundles, summary.RejectedCount)
	if err != nil {
		outcome = fmt.Sprintf("refused (%s): %v", imagepull.Reason(err), err)
	}
	fmt.Println(hugeReady + outcome)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// BombImage returns a catalog image whose one gzip layer (a few MiB) holds the package p and then files of
// padding adding up to total bytes uncompressed: a decompression bomb, for the tests of package catalogsource_test.
func BombImage(total int64) (v1.Image, error) {
	layer, err := hugeLayer(func(tw *tar.Writer) error {
		if err := writeFile(tw, "configs/p/catalog.json", []byte(hugeFBC)); err != nil {
			return err
		}
		for i, left := 0, total; left > 0; i++ {
			n := min(left, hugePieceBytes)
			if err := writePadding(tw, fmt.Sprintf("configs/padding-%02d.txt", i), n, false); err != nil {
				return err
			}
			left -= n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(empty.Image, layer)
}

// One catalog is parsed at a time: a parse waits while another holds the slot, and gives up with its context.
func TestParseCatalogOneAtATime(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/catalog.json", []byte(hugeFBC), 0o644); err != nil {
		t.Fatal(err)
	}
	parsing <- struct{}{} // another catalog is being parsed
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if c, err := parseCatalog(ctx, &image.Catalog{Dir: dir}, "x:"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("parsed %v, %v while another parse held the slot", c, err)
	}
	<-parsing
	c, err := parseCatalog(context.Background(), &image.Catalog{Dir: dir}, "x:")
	if err != nil || len(c.Bundles) != 1 {
		t.Fatalf("parse: %v, %v", c, err)
	}
}
