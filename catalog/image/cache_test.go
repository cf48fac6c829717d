package image

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestBundleCache(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	ctx := context.Background()
	type pushed struct{ ref, digest string }
	var bundles []pushed
	var files map[string]string
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		img, f := bundleImage(t, v)
		files = f
		ref := reg.ref("bundles/etcd:v" + v)
		bundles = append(bundles, pushed{ref, push(t, c, img, ref)})
	}
	cache := &BundleCache{Dir: filepath.Join(t.TempDir(), "cache"), MaxEntries: 2}

	// Concurrent Gets of one digest share one pull.
	reg.counts.reset()
	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range dirs {
		wg.Go(func() { dirs[i], errs[i] = cache.Get(ctx, c, bundles[2].ref, bundles[2].digest) })
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("Get %d = %s, %v", i, dirs[i], errs[i])
		}
	}
	if n := reg.counts.get("manifest GET"); n != 1 {
		t.Errorf("8 concurrent Gets made %d manifest GETs, want 1", n)
	}
	if got := readTree(t, dirs[0]); !reflect.DeepEqual(got["manifests/etcd.clusterserviceversion.yaml"],
		"kind: ClusterServiceVersion\nmetadata:\n  name: etcd.v1.2.0\n") || len(got) != len(files) {
		t.Errorf("entry = %v", got)
	}

	// A hit makes no request; beyond MaxEntries the least recently used entry goes.
	a, err := cache.Get(ctx, c, bundles[0].ref, bundles[0].digest)
	if err != nil {
		t.Fatal(err)
	}
	reg.counts.reset()
	if _, err := cache.Get(ctx, c, bundles[2].ref, bundles[2].digest); err != nil || len(reg.counts.kinds) != 0 {
		t.Fatalf("hit: %v, requests %v", err, reg.counts.kinds)
	}
	b, err := cache.Get(ctx, c, bundles[1].ref, bundles[1].digest)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{a: false, dirs[0]: true, b: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s present = %v, want %v", dir, err == nil, want)
		}
	}
}

// TestBundleCacheFailedPullLeavesNothing: a refused bundle leaves no entry and no temporary directory.
func TestBundleCacheFailedPullLeavesNothing(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	ref := reg.ref("bundles/evil:1")
	digest := push(t, c, imageOfLayers(t, nil, layerOf(t, file("manifests/ok.yaml", "x"),
		special("manifests/evil", 's', ""))), ref)
	cache := &BundleCache{Dir: t.TempDir(), MaxEntries: 2}
	_, err := cache.Get(context.Background(), c, ref, digest)
	if err == nil || !strings.Contains(err.Error(), RuleEntryType) {
		t.Fatalf("err = %v", err)
	}
	assertEmpty(t, cache.Dir)
	if entries, _ := os.ReadDir(cache.Dir); len(entries) != 0 {
		t.Errorf("cache dir holds %v", entries)
	}
}

// TestBundleCacheBoundedInBytes: beyond MaxBytes the least recently used entries go, whatever MaxEntries allows,
// and the entry just pulled stays even when it alone is over MaxBytes.
func TestBundleCacheBoundedInBytes(t *testing.T) {
	reg := newRegistry(t, false, nil)
	c := newClient(t, Options{})
	ctx := context.Background()
	var refs, digests []string
	for i := range 4 {
		// Bundles of 40 KiB each (random content, so that sizes do not depend on compression).
		ref := reg.ref(fmt.Sprintf("bundles/big:%d", i))
		blob := make([]byte, 40<<10)
		_, _ = rand.Read(blob)
		img := imageOfLayers(t, nil, layerOf(t, file("manifests/blob.yaml", string(blob)),
			file("metadata/annotations.yaml", "annotations: {}\n")))
		refs, digests = append(refs, ref), append(digests, push(t, c, img, ref))
	}
	cache := &BundleCache{Dir: t.TempDir(), MaxEntries: 100, MaxBytes: 100 << 10} // room for two
	get := func(i int) string {
		dir, err := cache.Get(ctx, c, refs[i], digests[i])
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	d0, d1 := get(0), get(1)
	get(0) // 1 is now the least recently used
	d2 := get(2)
	for dir, want := range map[string]bool{d0: true, d1: false, d2: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s present = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	if n := dirSize(cache.Dir); n > cache.MaxBytes {
		t.Errorf("cache holds %d bytes, over MaxBytes %d", n, cache.MaxBytes)
	}
	cache.MaxBytes = 10 << 10 // smaller than one entry
	d3 := get(3)
	if entries, _ := os.ReadDir(cache.Dir); len(entries) != 1 || entries[0].Name() != filepath.Base(d3) {
		t.Errorf("the cache holds %v, want only the entry just pulled (%s)", entries, filepath.Base(d3))
	}
}
