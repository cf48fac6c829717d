package harness

import (
	"context"
	"errors"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// ErrCrashed is what every write of a manager returns once its CrashPoint has been reached.
var ErrCrashed = errors.New("the manager crashed at the test's crash point")

// CrashPoint stops a manager at one write, as a crash there would: the first successful write that Match accepts
// goes through, Reached is closed, and every later write of that manager fails with ErrCrashed. The test then stops
// the manager; the state it finds is the state at that write, however fast or slow the machine is.
type CrashPoint struct {
	// Match is called with every successful write: the object as written and the subresource ("" for the object
	// itself, "status" for a status write).
	Match func(obj client.Object, subResource string) bool
	// Reached is closed when the crash point is reached.
	Reached chan struct{}
	crashed atomic.Bool
}

// NewCrashPoint returns a crash point at the first write that match accepts.
func NewCrashPoint(match func(obj client.Object, subResource string) bool) *CrashPoint {
	return &CrashPoint{Match: match, Reached: make(chan struct{})}
}

// Option installs the crash point in a manager's client.
func (p *CrashPoint) Option() Option {
	return WithInterceptor(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return p.write(obj, "", func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return p.write(obj, "", func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return p.write(obj, "", func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return p.write(obj, "", func() error { return c.Delete(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return p.write(obj, sub, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return p.write(obj, sub, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	})
}

func (p *CrashPoint) write(obj client.Object, sub string, do func() error) error {
	if p.crashed.Load() {
		return ErrCrashed
	}
	if err := do(); err != nil {
		return err
	}
	if p.Match(obj, sub) && p.crashed.CompareAndSwap(false, true) {
		close(p.Reached)
	}
	return nil
}
