package objectcache

import (
	"encoding/hex"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/internal/slim"
	"github.com/almproject/alm/internal/weakstring"
)

// hashSize is the size of the hash that operatorsv1alpha1.AnnotationAppliedHash holds, hex-encoded (installer.Hash).
const hashSize = 16

// appliedHashes holds the operatorsv1alpha1.AnnotationAppliedHash of each object in the cache of ALM's objects (For),
// out of the object: a one-entry annotation map costs a cached object about 350 bytes, an entry here about 150, and
// a thousand installs of a seven-object bundle are seven thousand cached objects. The cache's transform moves the
// value here (take), and the installer puts it back on the copy it reads (RestoreHash), so that it sees the object
// as stored. An entry is keyed by the object's UID string (which the decoder allocated for that object alone) and
// lives as long as it: it is forgotten when the object left the cache, or a newer version of the object, with an
// entry of its own, replaced it.
var appliedHashes = weakstring.New[[hashSize]byte]()

// objectsTransform is the transform of the cache of ALM's objects: slim's, then the applied hash moved out of the
// object's annotations (take).
func objectsTransform() toolscache.TransformFunc {
	transform := slim.Transform()
	return func(in any) (any, error) {
		out, err := transform(in)
		if obj, ok := out.(metav1.Object); ok && err == nil {
			take(appliedHashes, obj)
		}
		return out, err
	}
}

// RestoreHash puts the applied hash of obj, a copy read from the cache of ALM's objects, back in its annotations
// (see appliedHashes), unless obj carries one already.
func RestoreHash(obj metav1.Object) { restore(appliedHashes, obj) }

// take moves obj's applied hash into hashes, unless obj has none, no UID, or a value that is not a hash (an edited
// annotation stays where it is, and reads as changed content).
func take(hashes *weakstring.Table[[hashSize]byte], obj metav1.Object) {
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
	hashes.Put(uid, sum)
}

// restore puts the applied hash of obj (a copy read from the cache) from hashes back in its annotations, unless obj
// carries one already (it was read from the API server).
func restore(hashes *weakstring.Table[[hashSize]byte], obj metav1.Object) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[operatorsv1alpha1.AnnotationAppliedHash]; ok || obj.GetUID() == "" {
		return
	}
	_, sum, ok := hashes.Get(string(obj.GetUID()))
	if !ok {
		return
	}
	if annotations == nil {
		annotations = map[string]string{} // a copy's map is its own: the cache deep-copies what it returns
	}
	annotations[operatorsv1alpha1.AnnotationAppliedHash] = hex.EncodeToString(sum[:])
	obj.SetAnnotations(annotations)
}
