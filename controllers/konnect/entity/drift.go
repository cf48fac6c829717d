package entity

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/almproject/alm/controllers/konnect/bodydiff"
)

// driftScanner finds out-of-band changes with as few calls as possible: once per sync period it lists the
// entities of each control plane (a few paginated calls, filtered by the kind's identity tag), compares them with
// the objects, and enqueues only the objects whose entity differs or is missing; their reconcile then updates
// them. Objects whose spec changed are left to their own reconcile.
type driftScanner[T client.Object] struct {
	r      *Reconciler[T]
	events chan event.GenericEvent
}

// Start runs the scanner until ctx ends (a manager Runnable; it runs only on the leader).
func (s *driftScanner[T]) Start(ctx context.Context) error {
	ticker := time.NewTicker(s.r.SyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			s.scan(ctx)
		}
	}
}

// drift is what the scanner found of a drifted object's entity: its body as listed, nil when it is missing.
type drift struct{ actual map[string]any }

// scanGroup is the in-sync objects of one control plane (of one auth configuration for control planes).
type scanGroup[T client.Object] struct {
	refs    Refs
	objs    []T
	desired []map[string]any
	// parts are the objects whose parts a periodic check reads from Konnect (partsCandidate).
	parts []T
}

func (s *driftScanner[T]) scan(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", s.r.Kind.Name())
	list := s.r.Kind.NewList()
	// The objects are only read: no copy of every cached object once per period.
	if err := s.r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "drift scan: listing objects")
		return
	}
	groups := map[string]*scanGroup[T]{}
	for _, obj := range s.r.Kind.Items(list) {
		refs, desired, parts, ok := s.inSync(ctx, obj)
		if !ok {
			continue
		}
		key := string(refs.Auth.UID) + "/" + refs.ControlPlaneID
		g := groups[key]
		if g == nil {
			g = &scanGroup[T]{refs: refs}
			groups[key] = g
		}
		g.objs = append(g.objs, obj)
		g.desired = append(g.desired, desired)
		if parts {
			g.parts = append(g.parts, obj)
		}
	}
	for _, g := range groups {
		if ctx.Err() != nil || !s.compare(ctx, g) || !s.grantPartReads(ctx, g) {
			return
		}
	}
}

// inSync says whether obj is in Konnect as last written (so drift, not a change of the object, would make it
// differ), with its references and desired body. Mirrors are left out: their reconcile looks them up every sync
// period. parts says whether a periodic check of its parts reads Konnect (a candidate for the part reads budget).
func (s *driftScanner[T]) inSync(ctx context.Context, obj T) (refs Refs, desired map[string]any, parts, ok bool) {
	st := s.r.Kind.State(obj)
	if st.ID == "" || !obj.GetDeletionTimestamp().IsZero() || s.r.mirrorID(obj) != "" {
		return Refs{}, nil, false, false
	}
	refs, checks, err := s.r.Kind.Resolve(ctx, s.r.Client, obj)
	if err != nil || !allOK(checks) {
		return Refs{}, nil, false, false
	}
	desired, err = s.r.Kind.Desired(obj, refs)
	if err != nil {
		return Refs{}, nil, false, false
	}
	s.r.Identity.apply(desired)
	declared, partChecks, err := s.r.declaredParts(ctx, obj)
	if err != nil || s.r.stateHash(obj, refs, desired, declared) != st.Sync.ObservedHash {
		return Refs{}, nil, false, false
	}
	return refs, desired, partsCandidate(declared, partChecks), true
}

// compare lists the group's entities in Konnect and enqueues the objects whose entity differs or is missing. It
// returns false when ctx ended.
func (s *driftScanner[T]) compare(ctx context.Context, g *scanGroup[T]) bool {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", s.r.Kind.Name())
	api, _, err := s.r.Clients.API(ctx, g.refs.Auth)
	if err != nil {
		return true
	}
	entities, err := api.List(ctx, s.r.Kind.Type(), g.refs.ControlPlaneID, kindTag(s.r.Kind.Name()))
	if err != nil {
		// The objects stay as they are; the next scan tries again.
		log.Info("drift scan: listing Konnect entities failed", "controlPlaneID", g.refs.ControlPlaneID, "error", err.Error())
		return true
	}
	byID := make(map[string]map[string]any, len(entities))
	for _, e := range entities {
		byID[e.ID] = e.Body
	}
	for i, obj := range g.objs {
		actual, ok := byID[s.r.Kind.State(obj).ID]
		if ok && !bodydiff.Drifted(g.desired[i], actual, s.r.Kind.DriftKeys()) {
			continue
		}
		log.V(1).Info("drift found", "object", client.ObjectKeyFromObject(obj), "missing", !ok)
		s.r.drifted.Store(obj.GetUID(), drift{actual: actual})
		select {
		case s.events <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
