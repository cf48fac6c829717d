package scale

import "testing"

// An allocation is told by the innermost frame that names a use; the caches' transforms count as informers, though
// inlined they carry the name of the loop package that set them up.
func TestHeapUse(t *testing.T) {
	for _, tc := range []struct {
		frames []string
		want   string
	}{
		{[]string{"github.com/almproject/alm/internal/slim.Metadata", "github.com/almproject/alm/controllers/loops.CacheOptions.Transform.func1",
			"k8s.io/client-go/tools/cache.(*RealFIFO).addToItems_locked"}, "informers"},
		{[]string{"k8s.io/apimachinery/pkg/apis/meta/v1.(*ObjectMeta).Unmarshal", "k8s.io/client-go/tools/cache.(*Reflector).watch"}, "informers"},
		{[]string{"github.com/almproject/alm/apis/operators/v1alpha1.(*OperatorVersion).DeepCopy",
			"github.com/almproject/alm/controllers/install.(*Reconciler).Reconcile"}, "reconciles"},
		{[]string{"k8s.io/api/events/v1.(*Event).DeepCopy", "k8s.io/client-go/tools/events.(*eventBroadcasterImpl).recordToSink"}, "events"},
		{[]string{"runtime.doInit1"}, "other"},
	} {
		if got := heapUse(tc.frames); got != tc.want {
			t.Errorf("heapUse(%v) = %q, want %q", tc.frames, got, tc.want)
		}
	}
}
