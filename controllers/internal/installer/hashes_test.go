package installer

import (
	"hash/maphash"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	hashA = "0123456789abcdef0123456789abcdef"
	hashB = "fedcba9876543210fedcba9876543210"
)

func newHashTable() *hashTable {
	return &hashTable{seed: maphash.MakeSeed(), m: map[uint64][]hashEntry{}}
}

// cached returns an object as the cache's decoder makes one: its UID a string of its own.
func cached(uid string, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "x", Namespace: "ns", UID: types.UID(strings.Clone(uid)), Annotations: annotations}}
}

func TestHashMovesOutOfTheCachedObjectAndBackOntoItsCopy(t *testing.T) {
	table := newHashTable()
	obj := cached("uid-1", map[string]string{AnnotationHash: hashA, "keep": "me"})
	table.take(obj)
	if _, ok := obj.Annotations[AnnotationHash]; ok || obj.Annotations["keep"] != "me" {
		t.Fatalf("cached annotations %v, want only keep=me", obj.Annotations)
	}
	only := cached("uid-2", map[string]string{AnnotationHash: hashB})
	table.take(only)
	if only.Annotations != nil {
		t.Fatalf("an object whose only annotation was the hash keeps the map %v, want nil", only.Annotations)
	}

	for _, tc := range []struct {
		obj  *metav1.PartialObjectMetadata
		want string
	}{{obj, hashA}, {only, hashB}} {
		read := tc.obj.DeepCopy() // what a reader of the cache gets
		table.restore(read)
		if got := read.Annotations[AnnotationHash]; got != tc.want {
			t.Errorf("%s read from the cache: hash %q, want %q", tc.obj.UID, got, tc.want)
		}
		if _, ok := tc.obj.Annotations[AnnotationHash]; ok {
			t.Errorf("restoring a copy changed the cached object %s", tc.obj.UID)
		}
	}
	// A copy that names the UID with a string of its own still finds it.
	other := cached("uid-1", nil)
	table.restore(other)
	if other.Annotations[AnnotationHash] != hashA {
		t.Errorf("a copy with its own UID string: hash %q, want %q", other.Annotations[AnnotationHash], hashA)
	}
}

func TestHashStaysWhereTheTableCannotHoldIt(t *testing.T) {
	table := newHashTable()
	for _, value := range []string{"edited by hand", hashA[:30], strings.ToUpper(hashA)[:31] + "x"} {
		obj := cached("uid-1", map[string]string{AnnotationHash: value})
		table.take(obj)
		if obj.Annotations[AnnotationHash] != value {
			t.Errorf("value %q: annotations %v, want it left in place", value, obj.Annotations)
		}
	}
	noUID := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationHash: hashA}}}
	table.take(noUID)
	if noUID.Annotations[AnnotationHash] != hashA {
		t.Errorf("an object without a UID lost its hash: %v", noUID.Annotations)
	}
	if n := table.size(); n != 0 {
		t.Errorf("the table holds %d entries, want 0", n)
	}
	// What the API server returns carries its own hash, which restore leaves alone.
	table.take(cached("uid-9", map[string]string{AnnotationHash: hashA}))
	live := cached("uid-9", map[string]string{AnnotationHash: hashB})
	table.restore(live)
	if live.Annotations[AnnotationHash] != hashB {
		t.Errorf("restore replaced the hash of an object read from the API server: %v", live.Annotations)
	}
}

func TestHashOfANewerVersionWinsAndOutlivesTheOlder(t *testing.T) {
	table := newHashTable()
	table.take(cached("uid-1", map[string]string{AnnotationHash: hashA})) // nothing holds the older version after this
	newer := cached("uid-1", map[string]string{AnnotationHash: hashB})
	table.take(newer)
	if n := table.size(); n != 1 {
		t.Fatalf("two versions of one object: %d entries, want 1", n)
	}
	runtime.GC()
	runtime.GC()
	read := newer.DeepCopy()
	table.restore(read)
	if read.Annotations[AnnotationHash] != hashB {
		t.Fatalf("after the older version was collected: hash %q, want the newer %q", read.Annotations[AnnotationHash], hashB)
	}
	runtime.KeepAlive(newer)
}

func TestHashIsForgottenWithItsObject(t *testing.T) {
	table := newHashTable()
	for i := range 100 {
		table.take(cached("uid-"+strings.Repeat("x", i), map[string]string{AnnotationHash: hashA}))
	}
	kept := cached("uid-kept", map[string]string{AnnotationHash: hashB})
	table.take(kept)
	deadline := time.Now().Add(10 * time.Second)
	for table.size() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	if n := table.size(); n != 1 {
		t.Fatalf("after 100 of 101 objects were collected the table holds %d entries, want 1", n)
	}
	read := kept.DeepCopy()
	table.restore(read)
	if read.Annotations[AnnotationHash] != hashB {
		t.Errorf("the object still cached lost its hash: %v", read.Annotations)
	}
	runtime.KeepAlive(kept)
}
