package objectcache

import (
	"encoding/hex"
	"hash/maphash"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/internal/slim"
)

// hashSize is the size of the hash that operatorsv1alpha1.AnnotationAppliedHash holds, hex-encoded (installer.Hash).
const hashSize = 16

// appliedHashes holds the operatorsv1alpha1.AnnotationAppliedHash of each object in the cache of ALM's objects (For),
// out of the object: a one-entry annotation map costs a cached object about 350 bytes, an entry here about 100, and
// a thousand installs of a seven-object bundle are seven thousand cached objects. The cache's transform moves the
// value here (take), and the installer puts it back on the copy it reads (RestoreHash), so that it sees the object
// as stored. An entry lives as long as the cached object it came from: it is tied, weakly, to the object's UID
// string (which the decoder allocated for that object alone) and forgotten when that string is collected, because
// the object left the cache or a newer version of it, with an entry of its own, replaced it.
var appliedHashes = &hashTable{seed: maphash.MakeSeed(), m: map[uint64][]hashEntry{}}

type hashTable struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64][]hashEntry // by the hash of the UID
}

type hashEntry struct {
	uid  weak.Pointer[byte] // the cached object's UID string: its first byte
	n    int                // and its length
	hash [hashSize]byte
}

// objectsTransform is the transform of the cache of ALM's objects: slim's, then the applied hash moved out of the
// object's annotations (take).
func objectsTransform() toolscache.TransformFunc {
	transform := slim.Transform()
	return func(in any) (any, error) {
		out, err := transform(in)
		if obj, ok := out.(metav1.Object); ok && err == nil {
			appliedHashes.take(obj)
		}
		return out, err
	}
}

// take moves obj's applied hash into the table, unless obj has none, no UID, or a value that is not a hash (an
// edited annotation stays where it is, and reads as changed content).
func (t *hashTable) take(obj metav1.Object) {
	annotations := obj.GetAnnotations()
	value, ok := annotations[operatorsv1alpha1.AnnotationAppliedHash]
	uid := string(obj.GetUID())
	var sum [hashSize]byte
	if !ok || uid == "" || hex.DecodedLen(len(value)) != hashSize {
		return
	}
	if _, err := hex.Decode(sum[:], []byte(value)); err != nil {
		return
	}
	delete(annotations, operatorsv1alpha1.AnnotationAppliedHash) // slim.Metadata gave the object a map of its own
	if len(annotations) == 0 {
		obj.SetAnnotations(nil)
	}
	t.put(uid, sum)
}

func (t *hashTable) put(uid string, sum [hashSize]byte) {
	h := maphash.String(t.seed, uid)
	p := unsafe.StringData(uid)
	t.mu.Lock()
	defer t.mu.Unlock()
	entries := t.m[h]
	i := t.find(entries, uid)
	if i < 0 {
		entries = append(entries, hashEntry{})
		i = len(entries) - 1
	}
	entries[i] = hashEntry{uid: weak.Make(p), n: len(uid), hash: sum}
	t.m[h] = entries
	runtime.AddCleanup(p, t.sweep, h)
}

// RestoreHash puts the applied hash of obj, a copy read from the cache of ALM's objects, back in its annotations
// (see appliedHashes), unless obj carries one already.
func RestoreHash(obj metav1.Object) { appliedHashes.restore(obj) }

// restore puts the table's applied hash of obj (a copy read from the cache) back in its annotations, unless obj
// carries one already (it was read from the API server).
func (t *hashTable) restore(obj metav1.Object) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[operatorsv1alpha1.AnnotationAppliedHash]; ok || obj.GetUID() == "" {
		return
	}
	uid := string(obj.GetUID())
	h := maphash.String(t.seed, uid)
	t.mu.Lock()
	entries := t.m[h]
	i := t.find(entries, uid)
	var sum [hashSize]byte
	if i >= 0 {
		sum = entries[i].hash
	}
	t.mu.Unlock()
	if i < 0 {
		return
	}
	if annotations == nil {
		annotations = map[string]string{} // a copy's map is its own: the cache deep-copies what it returns
	}
	annotations[operatorsv1alpha1.AnnotationAppliedHash] = hex.EncodeToString(sum[:])
	obj.SetAnnotations(annotations)
}

// find returns the index of uid's live entry among entries, or -1. The caller holds t.mu.
func (t *hashTable) find(entries []hashEntry, uid string) int {
	for i, e := range entries {
		if p := e.uid.Value(); p != nil && e.n == len(uid) && unsafe.String(p, e.n) == uid {
			return i
		}
	}
	return -1
}

// sweep forgets the entries among those with hash h whose object was collected.
func (t *hashTable) sweep(h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.m[h][:0]
	for _, e := range t.m[h] {
		if e.uid.Value() != nil {
			live = append(live, e)
		}
	}
	if len(live) == 0 {
		delete(t.m, h)
		return
	}
	t.m[h] = live
}

// size is the number of entries the table holds (for tests).
func (t *hashTable) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, es := range t.m {
		n += len(es)
	}
	return n
}
