package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileRow is one hostile layer, written for a root ("configs" for a catalog, "manifests" for a bundle).
type hostileRow struct {
	name    string
	limits  Limits
	entries func(root string) []entry
	entry   func(root string) string // the entry the refusal names ("" for none)
	rule    string
	reason  string
}

func hostileRows() []hostileRow {
	random := make([]byte, 64*1024)
	_, _ = rand.Read(random)
	zeros := bytes.Repeat([]byte{0}, 100<<20)
	at := func(p string) func(string) string { return func(root string) string { return root + p } }
	return []hostileRow{
		{"compressed size over limit", Limits{MaxCompressed: 16 << 10},
			func(r string) []entry { return []entry{file(r+"/random.bin", string(random))} },
			func(string) string { return "" }, RuleCompressedSize, ReasonTooLarge},
		{"gzip bomb: 100 MiB of zeros", Limits{MaxUncompressed: 8 << 20, MaxFileSize: 1 << 30},
			func(r string) []entry {
				return []entry{{hdr: tar.Header{Name: r + "/zeros.json", Typeflag: tar.TypeReg, Mode: 0o644,
					Size: int64(len(zeros))}, body: zeros}}
			}, at("/zeros.json"), RuleUncompressedSize, ReasonTooLarge},
		{"too many entries", Limits{MaxEntries: 10},
			func(r string) []entry {
				var es []entry // after ok.json: the 11th entry is f09
				for i := range 20 {
					es = append(es, file(fmt.Sprintf("%s/f%02d.json", r, i), "{}"))
				}
				return es
			}, at("/f09.json"), RuleEntries, ReasonTooLarge},
		{"file over the per-file limit", Limits{MaxFileSize: 1 << 10},
			func(r string) []entry { return []entry{file(r+"/big.json", strings.Repeat("x", 4<<10))} },
			at("/big.json"), RuleFileSize, ReasonTooLarge},
		{"../ traversal", Limits{},
			func(r string) []entry { return []entry{file(r+"/../../etc/evil", "x")} },
			at("/../../etc/evil"), RuleTraversal, ReasonRefused},
		{"absolute path", Limits{},
			func(r string) []entry { return []entry{file("/"+r+"/abs.json", "x")} },
			func(r string) string { return "/" + r + "/abs.json" }, RuleAbsolute, ReasonRefused},
		{"symlink leaving the directory", Limits{},
			func(r string) []entry { return []entry{special(r+"/evil", tar.TypeSymlink, "../../../etc/passwd")} },
			at("/evil"), RuleLinkEscape, ReasonRefused},
		{"symlink to an absolute path", Limits{},
			func(r string) []entry { return []entry{special(r+"/evil", tar.TypeSymlink, "/etc/passwd")} },
			at("/evil"), RuleLinkEscape, ReasonRefused},
		{"hard link leaving the directory", Limits{},
			func(r string) []entry {
				return []entry{file("etc/passwd", "root:x:0:0"), special(r+"/evil", tar.TypeLink, "etc/passwd")}
			}, at("/evil"), RuleLinkEscape, ReasonRefused},
		{"character device", Limits{},
			func(r string) []entry { return []entry{special(r+"/null", tar.TypeChar, "")} },
			at("/null"), RuleEntryType, ReasonRefused},
		{"FIFO", Limits{},
			func(r string) []entry { return []entry{special(r+"/fifo", tar.TypeFifo, "")} },
			at("/fifo"), RuleEntryType, ReasonRefused},
	}
}

// TestHostileImagesRefused pulls each hostile layer as a catalog and as a bundle: each is refused naming the
// image, the layer, the entry and the rule, and nothing is left anywhere (a catalog's scratch directory is removed).
func TestHostileImagesRefused(t *testing.T) {
	reg := newRegistry(t, false, nil)
	pusher := newClient(t, Options{})
	ctx := context.Background()
	for i, row := range hostileRows() {
		for _, kind := range []string{"catalog", "bundle"} {
			t.Run(kind+"/"+row.name, func(t *testing.T) {
				root := map[string]string{"catalog": "configs", "bundle": "manifests"}[kind]
				entries := append([]entry{file(root+"/ok.json", "{}")}, row.entries(root)...)
				layer := layerOf(t, entries...)
				repo := fmt.Sprintf("hostile/%s%d", kind, i)
				ref := reg.ref(repo + ":1")
				digest := push(t, pusher, imageOfLayers(t, nil, layer), ref)
				sandbox := t.TempDir()
				c := newClient(t, Options{CatalogLimits: row.limits, BundleLimits: row.limits, ScratchDir: sandbox})
				reg.counts.reset()
				var err error
				if kind == "catalog" {
					_, err = c.PullCatalog(ctx, ref, digest)
				} else {
					_, err = c.PullBundle(ctx, ref, digest, filepath.Join(sandbox, "a", "b", "bundle"))
				}
				checkRefusal(t, err, row, repo+"@"+digest, digestOf(t, layer), row.entry(root))
				if row.rule == RuleCompressedSize && reg.counts.blob(digestOf(t, layer)) != 0 {
					t.Errorf("the layer was downloaded: %v", reg.counts.blobs)
				}
				assertEmpty(t, sandbox)
			})
		}
	}
}

func checkRefusal(t *testing.T, err error, row hostileRow, image, layer, entry string) {
	t.Helper()
	t.Log(err)
	r := asRefused(t, err)
	if !strings.HasSuffix(r.Image, image) || r.Layer != layer || r.Entry != entry || r.Rule != row.rule {
		t.Errorf("refused %+v; want image %s layer %s entry %q rule %s", r, image, layer, entry, row.rule)
	}
	for _, s := range []string{image, layer, fmt.Sprintf("entry %q", entry), row.rule} {
		if entry == "" && strings.HasPrefix(s, "entry") {
			continue
		}
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if Reason(err) != row.reason {
		t.Errorf("Reason = %s, want %s", Reason(err), row.reason)
	}
}

// assertEmpty fails if anything but directories exists under dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("written: %s", p)
		}
		if err == nil && d.IsDir() && (strings.HasPrefix(d.Name(), ".tmp-") || strings.HasPrefix(d.Name(), "catalog-")) {
			t.Errorf("temporary directory left: %s", p)
		}
		return err
	})
	for _, p := range []string{filepath.Join(dir, "..", "etc"), filepath.Join(dir, "..", "evil")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("written outside: %s", p)
		}
	}
}

// TestSafeLinksInsideKept: links that stay inside the directory are kept as copies, never as links.
func TestSafeLinksInsideKept(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	layer := layerOf(t, file("configs/p/catalog.json", "cat"), special("configs/q/link.json", tar.TypeSymlink, "../p/catalog.json"),
		special("configs/hard.json", tar.TypeLink, "configs/p/catalog.json"), special("configs/dangling", tar.TypeSymlink, "nope"),
		special("usr/lib/outside", tar.TypeSymlink, "/etc/passwd"), special("dev/null", tar.TypeChar, ""))
	ref := reg.ref("catalogs/links:1")
	digest := push(t, c, imageOfLayers(t, nil, layer), ref)
	cat, err := c.PullCatalog(context.Background(), ref, digest)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"p/catalog.json": "cat", "q/link.json": "cat", "hard.json": "cat"}
	if got := filesOf(t, cat); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files = %v, want %v", got, want)
	}
}

func TestBudgetReaderStopsAtLimit(t *testing.T) {
	src := &countReader{r: bytes.NewReader(make([]byte, 1<<20))}
	b := &budget{rule: RuleUncompressedSize, limit: 1000}
	n, err := io.Copy(io.Discard, &budgetReader{r: src, b: b})
	var rerr *ruleError
	if !errors.As(err, &rerr) || n != 1001 || src.n != 1001 {
		t.Errorf("read %d (source %d), %v", n, src.n, err)
	}
}

type countReader struct {
	r io.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestDenyLoopback: a client for an untrusted catalog never connects to a loopback address, whether the reference
// names 127.0.0.1 or a name that resolves there (localhost; the check is on the address dialled, so a redirect is
// refused the same way); the same pull without DenyLoopback works.
func TestDenyLoopback(t *testing.T) {
	reg := newRegistry(t, false, nil)
	img := catalogImage(t, map[string]string{"configs/p/catalog.yaml": "schema: olm.package\nname: p\n"})
	digest := push(t, newClient(t, Options{}), img, reg.ref("catalogs/c:v1"))
	_, port, _ := strings.Cut(reg.host, ":")
	for _, ref := range []string{reg.ref("catalogs/c:v1"), "localhost:" + port + "/catalogs/c:v1"} {
		reg.counts.reset()
		deny := newClient(t, Options{DenyLoopback: true})
		_, err := deny.PullCatalog(context.Background(), ref, digest)
		if r := asRefused(t, err); r.Rule != RuleLoopback || Reason(err) != ReasonRefused {
			t.Errorf("%s: refused by %s (%s), want %s", ref, r.Rule, Reason(err), RuleLoopback)
		}
		if n := reg.counts.get("ping") + reg.counts.get("manifest GET"); n != 0 {
			t.Errorf("%s: the loopback registry got %d requests from a client that denies loopback", ref, n)
		}
		if _, err := newClient(t, Options{}).PullCatalog(context.Background(), ref, digest); err != nil {
			t.Errorf("%s without DenyLoopback: %v", ref, err)
		}
		if reg.counts.get("manifest GET") == 0 {
			t.Errorf("%s: the registry served no manifest: the allowed pull did not reach it", ref)
		}
	}
}

// Applying an entry costs one lookup, not a walk over every file kept so far: many files (and whiteouts of files)
// walk nothing; only the whiteout of a directory walks, once.
func TestEntriesDoNotWalkKeptFiles(t *testing.T) {
	x := newExtraction("img", t.TempDir(), DefaultCatalogLimits(), []string{"configs"})
	add := func(layer int, name string) {
		t.Helper()
		hdr := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}
		if err := x.entry(layer, hdr, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2000 {
		add(0, fmt.Sprintf("configs/d%02d/f%04d.json", i%20, i))
	}
	add(1, "configs/d00/f0000.json")     // replaces a lower file
	add(1, "configs/d01/.wh.f0001.json") // a whiteout of a file
	if x.walks != 0 || len(x.files) != 1999 {
		t.Fatalf("%d walks, %d files; want none and 1999", x.walks, len(x.files))
	}
	add(1, "configs/.wh.d02") // a whiteout of a directory
	if x.walks == 0 || len(x.files) != 1899 {
		t.Errorf("%d walks, %d files after the directory's whiteout; want some and 1899", x.walks, len(x.files))
	}
}
