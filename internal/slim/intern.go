package slim

import (
	"hash/maphash"
	"runtime"
	"sync"
	"unsafe"
	"weak"
)

// table keeps one copy of each string that cached objects hold, weakly: a copy that no object holds any more is
// collected and forgotten (names and UIDs of objects long gone do not pile up). unique.Make does not do here: its
// canonical copy is forgotten as soon as no Handle is held, and the cache holds strings, not Handles.
type table struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64][]entry
}

type entry struct {
	p weak.Pointer[byte]
	n int
}

var shared = &table{seed: maphash.MakeSeed(), m: map[uint64][]entry{}}

// intern returns the table's copy of s, making one if there is none.
func intern(s string) string {
	if s == "" {
		return s
	}
	return shared.intern(s)
}

func (t *table) intern(s string) string {
	h := maphash.String(t.seed, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.m[h] {
		if p := e.p.Value(); p != nil && e.n == len(s) {
			if shared := unsafe.String(p, e.n); shared == s {
				return shared
			}
		}
	}
	// At least 16 bytes: smaller objects may share a block with others (Go's tiny allocator) and be kept longer.
	b := make([]byte, len(s), max(len(s), 16))
	copy(b, s)
	p := &b[0]
	t.m[h] = append(t.m[h], entry{p: weak.Make(p), n: len(s)})
	runtime.AddCleanup(p, t.sweep, h)
	return unsafe.String(p, len(s))
}

// sweep forgets the collected copies among those with hash h.
func (t *table) sweep(h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.m[h][:0]
	for _, e := range t.m[h] {
		if e.p.Value() != nil {
			live = append(live, e)
		}
	}
	if len(live) == 0 {
		delete(t.m, h)
		return
	}
	t.m[h] = live
}

// size is the number of copies the table knows (for tests).
func (t *table) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, es := range t.m {
		n += len(es)
	}
	return n
}
