package weakstring

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
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
	deadline := time.Now().Add(10 * time.Second)
	for table.Len() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	if n := table.Len(); n != 1 {
		t.Fatalf("after 100 of 101 keys were collected the table holds %d entries, want 1", n)
	}
	if _, v, ok := table.Get("the key that is still held"); !ok || v != -1 {
		t.Fatalf("the key still held: Get = %d, %v; want -1, true", v, ok)
	}
	runtime.KeepAlive(kept)
}
