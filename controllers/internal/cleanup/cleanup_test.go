package cleanup

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Install and Upgrade loops both run the finalizer of a deleted version; it runs once at a time, and not again
// once removed while the cache still shows it, but again for a new version of the same name.
func TestFinalizerRunsOnceAcrossLoops(t *testing.T) {
	p := &inProgress{running: map[types.UID]bool{}, removed: map[client.ObjectKey]types.UID{}}
	key := client.ObjectKey{Namespace: "ns", Name: "demo.v1.0.0"}
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"the first loop runs it", func() bool { return p.start(key, "a") }, true},
		{"the second loop does not while the first runs it", func() bool { return p.start(key, "a") }, false},
		{"the first ends without removing it (objects deleted, settling)", func() bool { p.finish(key, "a", false); return p.start(key, "a") }, true},
		{"once removed, a stale cache does not run it again", func() bool { p.finish(key, "a", true); return p.start(key, "a") }, false},
		{"a new version of the same name runs it", func() bool { return p.start(key, "b") }, true},
		{"after the version is gone, it is forgotten", func() bool { p.finish(key, "b", true); p.forget(key); return p.start(key, "b") }, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: start = %v, want %v", s.name, got, s.want)
		}
	}
}
