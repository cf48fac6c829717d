package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// counts are a test registry's requests by kind ("ping", "manifest HEAD", "manifest GET", "blob GET", ...), the
// blob GETs by digest, and the bytes it wrote.
type counts struct {
	mu      sync.Mutex
	kinds   map[string]int
	blobs   map[string]int
	written int64
}

func (c *counts) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds, c.blobs, c.written = map[string]int{}, map[string]int{}, 0
}

func (c *counts) get(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[kind]
}

func (c *counts) blob(digest string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blobs[digest]
}

// kindOf classifies a registry request.
func kindOf(r *http.Request) (kind, digest string) {
	p := r.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		return "ping", ""
	case strings.Contains(p, "/manifests/"):
		return "manifest " + r.Method, ""
	case strings.Contains(p, "/blobs/uploads"):
		return "upload " + r.Method, ""
	case strings.Contains(p, "/blobs/"):
		return "blob " + r.Method, p[strings.LastIndex(p, "/")+1:]
	}
	return "other " + r.Method, ""
}

type countingWriter struct {
	http.ResponseWriter
	c *counts
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.c.mu.Lock()
	w.c.written += int64(n)
	w.c.mu.Unlock()
	return n, err
}

// testRegistry is go-containerregistry's in-process registry on loopback, counting requests.
type testRegistry struct {
	srv    *httptest.Server
	host   string
	counts *counts
}

// newRegistry starts a registry; wrap (optional) wraps its handler inside the counting one.
func newRegistry(t *testing.T, tls bool, wrap func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	c := &counts{}
	c.reset()
	counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, digest := kindOf(r)
		c.mu.Lock()
		c.kinds[kind]++
		if digest != "" && r.Method == http.MethodGet {
			c.blobs[digest]++
		}
		c.mu.Unlock()
		h.ServeHTTP(countingWriter{ResponseWriter: w, c: c}, r)
	})
	srv := httptest.NewUnstartedServer(counting)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the TLS tests' failed handshakes
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return &testRegistry{srv: srv, host: strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://"), counts: c}
}

func (r *testRegistry) ref(repo string) string { return r.host + "/" + repo }

func newClient(t *testing.T, opts Options) *Client {
	t.Helper()
	opts.Insecure = true
	if opts.ScratchDir == "" {
		opts.ScratchDir = t.TempDir()
	}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// push pushes img to ref and returns its digest.
func push(t *testing.T, c *Client, img v1.Image, ref string) string {
	t.Helper()
	d, err := c.Push(context.Background(), img, ref)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// entry is one tar entry of a hand-made layer.
type entry struct {
	hdr  tar.Header
	body []byte
}

func file(name string, body string) entry {
	return entry{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body: []byte(body)}
}

func special(name string, typ byte, link string) entry {
	return entry{hdr: tar.Header{Name: name, Typeflag: typ, Mode: 0o644, Linkname: link}}
}

// layerOf is a gzip layer of entries, written as given (no checks: the entries may be hostile).
func layerOf(t *testing.T, entries ...entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOfLayers is an image of layers with labels.
func imageOfLayers(t *testing.T, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Config.Labels = "linux", "amd64", labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digestOf(t *testing.T, l v1.Layer) string {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// asRefused returns err as a *RefusedError or fails.
func asRefused(t *testing.T, err error) *RefusedError {
	t.Helper()
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("want a *RefusedError, got %v", err)
	}
	return r
}

// readTree returns the regular files under dir by slash path, and fails on anything else.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s: not a regular file", p)
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
