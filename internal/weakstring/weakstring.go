// Package weakstring maps strings to values for as long as the memory of the string a value was put with lives: the
// table holds that string weakly, and forgets the entry once the string is collected. Objects that a cache holds can
// so carry data beside them (an entry keyed by one of their strings) without the table keeping them, or their
// entries, after the cache let them go.
package weakstring

import (
	"hash/maphash"
	"sync"
	"unsafe"
	"weak"
)

// minSweep is the fewest entries a table sweeps at (see Table.sweepAt).
const minSweep = 1024

// Table maps strings to values of type V. Its zero value is not ready: use New.
//
// An entry costs its map slot and the runtime's weak handle, about 60 bytes beside a 16-byte value: caches hold
// tens of thousands. A collected key's entry is not removed at once (a cleanup per key would cost more than the entry
// itself): Put sweeps the table when it has grown by half since the last sweep, so the forgotten entries never
// outnumber half the live ones, and their keys' memory is freed with the keys.
type Table[V any] struct {
	mu   sync.Mutex
	hash func(string) uint64
	m    map[uint64]entry[V]   // by the hash of the key
	more map[uint64][]entry[V] // further keys of a hash that m holds another key of (rare: 64-bit hashes)
	// sweepAt is the number of entries at which Put sweeps next: 1.5 times those left by the last sweep.
	sweepAt int
}

type entry[V any] struct {
	p weak.Pointer[byte] // the key's first byte
	n int                // and its length
	v V
}

// New returns an empty table.
func New[V any]() *Table[V] {
	seed := maphash.MakeSeed()
	hash := func(s string) uint64 { return maphash.String(seed, s) }
	return &Table[V]{hash: hash, m: map[uint64]entry[V]{}, more: map[uint64][]entry[V]{}, sweepAt: minSweep}
}

// Get returns the table's key equal to s (the string put with the entry), its value, and whether there is one.
func (t *Table[V]) Get(s string) (string, V, bool) {
	h := t.hash(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[h]; ok {
		if p := e.key(s); p != nil {
			return unsafe.String(p, len(s)), e.v, true
		}
	}
	for _, e := range t.more[h] {
		if p := e.key(s); p != nil {
			return unsafe.String(p, len(s)), e.v, true
		}
	}
	var zero V
	return "", zero, false
}

// Put maps key to v, replacing the entry of an equal key. The entry lives as long as key's memory: key must not be
// empty, and should be a string of its own of at least 16 bytes (not a literal, which lives for ever, nor part of a
// larger string, nor a shorter one, which Go's tiny allocator may put in one block with others: each keeps the
// entry as long as the whole).
func (t *Table[V]) Put(key string, v V) {
	h := t.hash(key)
	put := entry[V]{p: weak.Make(unsafe.StringData(key)), n: len(key), v: v}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.m[h]; !ok || e.key(key) != nil || e.p.Value() == nil {
		t.m[h] = put // new, the same key's, or a collected key's
	} else {
		more := t.more[h]
		i := 0
		for i < len(more) && more[i].key(key) == nil {
			i++
		}
		if i == len(more) {
			more = append(more, put)
		}
		more[i] = put
		t.more[h] = more
	}
	if t.entries() >= t.sweepAt {
		t.sweep()
	}
}

// Len is the number of entries the table holds, forgotten ones not swept yet included.
func (t *Table[V]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries()
}

// Sweep forgets the entries whose key was collected now, rather than when the table next grew by half.
func (t *Table[V]) Sweep() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep()
}

func (t *Table[V]) entries() int {
	n := len(t.m)
	for _, es := range t.more {
		n += len(es)
	}
	return n
}

// sweep forgets the entries whose key was collected, and sets when to sweep next. t.mu is held.
func (t *Table[V]) sweep() {
	for h, e := range t.m {
		if e.p.Value() == nil {
			delete(t.m, h)
		}
	}
	for h, es := range t.more {
		live := es[:0]
		for _, e := range es {
			if e.p.Value() != nil {
				live = append(live, e)
			}
		}
		switch {
		case len(live) == 0:
			delete(t.more, h)
		case len(live) == len(es):
		default:
			clear(es[len(live):])
			t.more[h] = live
		}
	}
	t.sweepAt = max(minSweep, t.entries()*3/2)
}

// key returns the first byte of e's key when it is alive and equal to s; nil otherwise.
func (e entry[V]) key(s string) *byte {
	if p := e.p.Value(); p != nil && e.n == len(s) && unsafe.String(p, e.n) == s {
		return p
	}
	return nil
}
