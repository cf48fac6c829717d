package weakstring

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestGetReturnsTheKeyPutAndItsValue(t *testing.T) {
	table := New[int]()
	key := strings.Clone("name")
	table.Put(key, 1)
	got, v, ok := table.Get(strings.Clone("name")) // an equal string of its own finds it
	if !ok || v != 1 || unsafe.StringData(got) != unsafe.StringData(key) {
		t.Fatalf("Get = %q, %d, %v; want the key put, 1, true", got, v, ok)
	}
	newer := strings.Clone("name")
	table.Put(newer, 2)
	if _, v, _ := table.Get("name"); v != 2 || table.Len() != 1 {
		t.Fatalf("after a second Put of an equal key: value %d, %d entries; want 2, 1", v, table.Len())
	}
	if _, _, ok := table.Get("other"); ok {
		t.Fatal("Get of a key never put found an entry")
	}
	runtime.KeepAlive(key)
	runtime.KeepAlive(newer)
}

func TestEntriesGoWithTheirKeys(t *testing.T) {
	table := New[int]()
	for i := range 100 {
		table.Put(strings.Clone("a key of 16 bytes or more, "+strconv.Itoa(i)), i)
	}
	kept := strings.Clone("the key that is still held")
	table.Put(kept, -1)
	runtime.GC()
	table.Sweep()
	if n := table.Len(); n != 1 {
		t.Fatalf("after 100 of 101 keys were collected the table holds %d entries, want 1", n)
	}
	if _, v, ok := table.Get("the key that is still held"); !ok || v != -1 {
		t.Fatalf("the key still held: Get = %d, %v; want -1, true", v, ok)
	}
	runtime.KeepAlive(kept)
}

// A table whose keys come and go sweeps itself: the entries of collected keys never outnumber half the live ones
// (and minSweep), however many keys were put.
func TestTableSweepsAsItGrows(t *testing.T) {
	table := New[int]()
	var live []string
	for round := range 20 {
		live = live[:0]
		for i := range 2000 {
			key := strings.Clone(fmt.Sprintf("round %d, key %d of the table", round, i))
			live = append(live, key)
			table.Put(key, i)
		}
		runtime.GC() // the last round's keys are collected; this round's are held
		if n, limit := table.Len(), max(minSweep, 2000*3/2)+2000; n > limit {
			t.Fatalf("round %d: the table holds %d entries for 2000 live keys, want at most %d", round, n, limit)
		}
	}
	for i, key := range live {
		if _, v, ok := table.Get(strings.Clone(key)); !ok || v != i {
			t.Fatalf("live key %q: Get = %d, %v; want %d, true", key, v, ok, i)
		}
	}
	runtime.KeepAlive(live)
}

// Keys whose hashes collide are kept apart: each finds its own value, a second Put of one replaces its value only,
// and the entries of collected keys are swept from among them.
func TestCollidingHashes(t *testing.T) {
	table := New[int]()
	table.hash = func(string) uint64 { return 42 } // every key collides
	var keys []string
	for i := range 5 {
		keys = append(keys, strings.Clone(fmt.Sprintf("key %d of one hash, 16 bytes or more", i)))
		table.Put(keys[i], i)
	}
	keys[3] = strings.Clone(keys[3]) // the entry is now this copy's
	table.Put(keys[3], 30)
	for i, key := range keys {
		want := map[bool]int{true: 30, false: i}[i == 3]
		if _, v, ok := table.Get(strings.Clone(key)); !ok || v != want {
			t.Fatalf("key %d: Get = %d, %v; want %d, true", i, v, ok, want)
		}
	}
	if n := table.Len(); n != 5 {
		t.Fatalf("five keys of one hash: %d entries, want 5", n)
	}
	keys[0], keys[2] = "", "" // the first (in the map's own slot) and one of the further keys are collected
	runtime.GC()
	table.Sweep()
	if n := table.Len(); n != 3 {
		t.Fatalf("after two of five keys were collected: %d entries, want 3", n)
	}
	later := strings.Clone("a key put after the sweep, of the same hash")
	table.Put(later, 5)
	for _, i := range []int{1, 4} {
		if _, v, ok := table.Get(strings.Clone(keys[i])); !ok || v != i {
			t.Fatalf("key %d after the sweep: Get = %d, %v; want %d, true", i, v, ok, i)
		}
	}
	if _, v, ok := table.Get("a key put after the sweep, of the same hash"); !ok || v != 5 {
		t.Fatalf("the later key: Get = %d, %v; want 5, true", v, ok)
	}
	runtime.KeepAlive(keys)
	runtime.KeepAlive(later)
}
