package objectcache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/internal/weakstring"
)

const (
	hashA = "0123456789abcdef0123456789abcdef"
	hashB = "fedcba9876543210fedcba9876543210"
)

func newHashTable() *weakstring.Table[[hashSize]byte] { return weakstring.New[[hashSize]byte]() }

// uid is a UID of the shape the API server gives (36 bytes), numbered n.
func uid(n int) string { return fmt.Sprintf("%08d-1c98-4a2e-b20d-4d01b2a2a5ad", n) }

// cached returns an object as the cache's decoder makes one: its UID a string of its own.
func cached(uid string, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "x", Namespace: "ns", UID: types.UID(strings.Clone(uid)), Annotations: annotations}}
}

func TestHashMovesOutOfTheCachedObjectAndBackOntoItsCopy(t *testing.T) {
	table := newHashTable()
	obj := cached(uid(1), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashA, "keep": "me"})
	take(table, obj)
	if _, ok := obj.Annotations[operatorsv1alpha1.AnnotationAppliedHash]; ok || obj.Annotations["keep"] != "me" {
		t.Fatalf("cached annotations %v, want only keep=me", obj.Annotations)
	}
	only := cached(uid(2), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashB})
	take(table, only)
	if only.Annotations != nil {
		t.Fatalf("an object whose only annotation was the hash keeps the map %v, want nil", only.Annotations)
	}

	for _, tc := range []struct {
		obj  *metav1.PartialObjectMetadata
		want string
	}{{obj, hashA}, {only, hashB}} {
		read := tc.obj.DeepCopy() // what a reader of the cache gets
		restore(table, read)
		if got := read.Annotations[operatorsv1alpha1.AnnotationAppliedHash]; got != tc.want {
			t.Errorf("%s read from the cache: hash %q, want %q", tc.obj.UID, got, tc.want)
		}
		if _, ok := tc.obj.Annotations[operatorsv1alpha1.AnnotationAppliedHash]; ok {
			t.Errorf("restoring a copy changed the cached object %s", tc.obj.UID)
		}
	}
	// A copy that names the UID with a string of its own still finds it.
	other := cached(uid(1), nil)
	restore(table, other)
	if other.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != hashA {
		t.Errorf("a copy with its own UID string: hash %q, want %q", other.Annotations[operatorsv1alpha1.AnnotationAppliedHash], hashA)
	}
}

func TestHashStaysWhereTheTableCannotHoldIt(t *testing.T) {
	table := newHashTable()
	for _, value := range []string{"edited by hand", hashA[:30], strings.ToUpper(hashA)[:31] + "x"} {
		obj := cached(uid(1), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: value})
		take(table, obj)
		if obj.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != value {
			t.Errorf("value %q: annotations %v, want it left in place", value, obj.Annotations)
		}
	}
	noUID := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashA}}}
	take(table, noUID)
	if noUID.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != hashA {
		t.Errorf("an object without a UID lost its hash: %v", noUID.Annotations)
	}
	if n := table.Len(); n != 0 {
		t.Errorf("the table holds %d entries, want 0", n)
	}
	// What the API server returns carries its own hash, which restore leaves alone.
	take(table, cached(uid(9), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashA}))
	live := cached(uid(9), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashB})
	restore(table, live)
	if live.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != hashB {
		t.Errorf("restore replaced the hash of an object read from the API server: %v", live.Annotations)
	}
}

func TestHashOfANewerVersionWinsAndOutlivesTheOlder(t *testing.T) {
	table := newHashTable()
	take(table, cached(uid(1), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashA})) // nothing holds the older version after this
	newer := cached(uid(1), map[string]string{operatorsv1alpha1.AnnotationAppliedHash: hashB})
	take(table, newer)
	if n := table.Len(); n != 1 {
		t.Fatalf("two versions of one object: %d entries, want 1", n)
	}
	runtime.GC()
	runtime.GC()
	read := newer.DeepCopy()
	restore(table, read)
	if read.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != hashB {
		t.Fatalf("after the older version was collected: hash %q, want the newer %q", read.Annotations[operatorsv1alpha1.AnnotationAppliedHash], hashB)
	}
	runtime.KeepAlive(newer)
}
