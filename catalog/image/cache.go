package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BundleCache keeps unpacked bundle images on disk by digest, at most MaxEntries of them and MaxBytes of files. Each
// entry is a bundle directory (Dir/<algorithm>-<hex>/manifests, .../metadata) written by Client.PullBundle, so it
// appears complete or not at all. Concurrent Gets of one digest share one pull. Beyond MaxEntries or MaxBytes the
// least recently used entries are removed (never the one just pulled): a caller should read the directory it got
// before other bundles are pulled. The disk the cache uses is at most MaxBytes plus the pulls in progress (each at
// most the client's BundleLimits.MaxUncompressed). The zero value is not usable; set Dir. A BundleCache is safe for concurrent use. Each Get names the Client that pulls on a
// miss: bundles listed by different catalogs are pulled with different credentials, and one cache serves them all.
type BundleCache struct {
	// Dir holds the entries; it is created if needed. Nothing else should write there.
	Dir string
	// MaxEntries bounds the number of entries; 0 means 64.
	MaxEntries int
	// MaxBytes bounds the size of the entries' files together; 0 means DefaultBundleCacheBytes.
	MaxBytes int64

	mu       sync.Mutex
	inflight map[string]*pull
	used     map[string]int64 // entry -> tick of its last use in this process
	sizes    map[string]int64 // entry -> bytes of its files, once measured
	tick     int64
	cleaned  bool
}

// pull is one pull that concurrent callers wait for.
type pull struct {
	done chan struct{}
	err  error
}

// Get returns the bundle directory of ref at digest, pulling it with client if it is not cached. A failed pull
// leaves no entry and is not remembered (the next Get tries again). Entries are content-addressed: a hit needs no
// request and no credentials, and concurrent Gets of one digest wait for the pull the first one started (with its
// client).
func (c *BundleCache) Get(ctx context.Context, client *Client, ref, digest string) (string, error) {
	h, err := v1.NewHash(digest)
	if err != nil {
		return "", fmt.Errorf("image %s: digest %q: %w", ref, digest, err)
	}
	key := h.Algorithm + "-" + h.Hex
	dir := filepath.Join(c.Dir, key)
	c.mu.Lock()
	c.init()
	if _, err := os.Stat(dir); err == nil {
		c.touch(key)
		c.mu.Unlock()
		return dir, nil
	}
	p, ok := c.inflight[key]
	if !ok {
		p = &pull{done: make(chan struct{})}
		c.inflight[key] = p
		go c.run(context.WithoutCancel(ctx), client, p, key, ref, digest, dir)
	}
	c.mu.Unlock()
	select {
	case <-p.done:
		if p.err != nil {
			return "", p.err
		}
		return dir, nil
	case <-ctx.Done():
		return "", fmt.Errorf("image %s@%s: %w", ref, digest, ctx.Err())
	}
}

// init prepares the cache on first use: maps, and temporary directories a crashed process left behind. c.mu held.
func (c *BundleCache) init() {
	if c.cleaned {
		return
	}
	c.cleaned = true
	c.inflight, c.used, c.sizes = map[string]*pull{}, map[string]int64{}, map[string]int64{}
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			_ = os.RemoveAll(filepath.Join(c.Dir, e.Name()))
		}
	}
}

// run pulls one entry for all waiters, then evicts beyond MaxEntries.
func (c *BundleCache) run(ctx context.Context, client *Client, p *pull, key, ref, digest, dir string) {
	_, err := client.PullBundle(ctx, ref, digest, dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
	p.err = err
	if err == nil {
		c.touch(key)
		c.evict(key)
	}
	close(p.done)
}

// touch records a use of key, in memory and as the entry's modification time (the order after a restart).
func (c *BundleCache) touch(key string) {
	c.tick++
	c.used[key] = c.tick
	now := time.Now()
	_ = os.Chtimes(filepath.Join(c.Dir, key), now, now)
}

// DefaultBundleCacheBytes is BundleCache.MaxBytes when it is not set: 1 GiB.
const DefaultBundleCacheBytes = gib

// evict removes the least recently used entries beyond MaxEntries or MaxBytes, except keep (the entry just pulled).
// c.mu held.
func (c *BundleCache) evict(keep string) {
	maxEntries, maxBytes := c.MaxEntries, c.MaxBytes
	if maxEntries <= 0 {
		maxEntries = 64
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBundleCacheBytes
	}
	all := c.entries()
	var total int64
	for _, e := range all {
		total += e.size
	}
	for i := 0; i < len(all) && (len(all)-i > maxEntries || total > maxBytes); i++ {
		if all[i].key == keep {
			continue
		}
		_ = os.RemoveAll(filepath.Join(c.Dir, all[i].key))
		delete(c.used, all[i].key)
		delete(c.sizes, all[i].key)
		total -= all[i].size
	}
}

// cacheEntry is an entry of the cache directory, with its last use and size.
type cacheEntry struct {
	key  string
	tick int64
	mod  time.Time
	size int64
}

// entries lists the cache's entries, least recently used first. c.mu held.
func (c *BundleCache) entries() []cacheEntry {
	dirents, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil
	}
	var all []cacheEntry
	for _, e := range dirents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		size, ok := c.sizes[e.Name()]
		if !ok {
			size = dirSize(filepath.Join(c.Dir, e.Name()))
			c.sizes[e.Name()] = size
		}
		all = append(all, cacheEntry{key: e.Name(), tick: c.used[e.Name()], mod: info.ModTime(), size: size})
	}
	// Entries not used in this process (tick 0) are older than any used, in modification time order.
	sort.Slice(all, func(i, j int) bool {
		if all[i].tick != all[j].tick {
			return all[i].tick < all[j].tick
		}
		return all[i].mod.Before(all[j].mod)
	})
	return all
}

// dirSize is the size of the regular files under dir (each hard link counted: an upper bound).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
