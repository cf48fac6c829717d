// Package weakstring maps strings to values for as long as the memory of the string a value was put with lives: the
// table holds that string weakly, and forgets the entry once the string is collected. Objects that a cache holds can
// so carry data beside them (an entry keyed by one of their strings) without the table keeping them, or their
// entries, after the cache let them go.
package weakstring

import (
	"hash/maphash"
	"runtime"
	"sync"
	"unsafe"
	"weak"
)

// Table maps strings to values of type V. Its zero value is not ready: use New.
type Table[V any] struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64][]entry[V] // by the hash of the key
}

type entry[V any] struct {
	p weak.Pointer[byte] // the key's first byte
	n int                // and its length
	v V
}

// New returns an empty table.
func New[V any]() *Table[V] {
	return &Table[V]{seed: maphash.MakeSeed(), m: map[uint64][]entry[V]{}}
}

// Get returns the table's key equal to s (the string put with the entry), its value, and whether there is one.
func (t *Table[V]) Get(s string) (string, V, bool) {
	h := maphash.String(t.seed, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, p := find(t.m[h], s); p != nil {
		return unsafe.String(p, len(s)), t.m[h][i].v, true
	}
	var zero V
	return "", zero, false
}

// Put maps key to v, replacing the entry of an equal key. The entry lives as long as key's memory: key must not be
// empty, and should be a string of its own of at least 16 bytes (not a literal, which lives for ever, nor part of a
// larger string, nor a shorter one, which Go's tiny allocator may put in one block with others: each keeps the
// entry as long as the whole).
func (t *Table[V]) Put(key string, v V) {
	h := maphash.String(t.seed, key)
	p := unsafe.StringData(key)
	t.mu.Lock()
	defer t.mu.Unlock()
	es := t.m[h]
	i, _ := find(es, key)
	if i < 0 {
		es = append(es, entry[V]{})
		i = len(es) - 1
	}
	es[i] = entry[V]{p: weak.Make(p), n: len(key), v: v}
	t.m[h] = es
	runtime.AddCleanup(p, t.sweep, h)
}

// Len is the number of entries the table holds.
func (t *Table[V]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, es := range t.m {
		n += len(es)
	}
	return n
}

// find returns the index of s's live entry among es and its key's first byte, or -1 and nil.
func find[V any](es []entry[V], s string) (int, *byte) {
	for i, e := range es {
		if p := e.p.Value(); p != nil && e.n == len(s) && unsafe.String(p, e.n) == s {
			return i, p
		}
	}
	return -1, nil
}

// sweep forgets the entries among those with hash h whose key was collected.
func (t *Table[V]) sweep(h uint64) {
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
