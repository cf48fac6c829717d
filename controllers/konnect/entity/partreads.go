package entity

import (
	"context"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Part reads. Konnect shows some parts of an entity only entity by entity (a consumer group's members, a consumer's
// credentials, a control plane group's members), so checking every entity's parts once per sync period would cost
// one call per entity per period. In DriftModeList they are checked round robin instead: once per sync period the
// drift scanner grants the part checks of at most PartReads entities of each control plane (per kind), those whose
// parts were synced longest ago first (lastSyncTime in the status, which every part sync sets), and enqueues them.
// With N such entities of a kind in a control plane, each one's parts are checked at least every ceil(N/PartReads)
// sync periods, and drift of them is repaired then. A change of the object (creation, spec, labels, annotations)
// syncs its parts at once, outside the budget. Only the scanner (one goroutine) grants, and a grant is taken by one
// reconcile of its object, so concurrent workers cannot spend more; a grant not yet taken counts against the next
// period's budget. After a restart nothing is granted before the first scan, a sync period later, and that scan
// grants at most PartReads per control plane again: everything is due, but spread, not burst.

// DefaultPartReads is the default budget of periodic part checks per control plane, kind and sync period.
const DefaultPartReads = 5

// partCandidate is an in-sync object whose parts a periodic check reads from Konnect.
type partCandidate struct {
	// last is when its parts were last synced (zero: never).
	last time.Time
	// granted: it holds a grant not taken yet.
	granted bool
}

// grantParts picks the candidates whose parts are checked this period, as indexes into cands: first those that hold a
// grant not taken yet (they are enqueued again), then the ones synced longest ago, until budget grants are out
// (budget <= 0: no limit).
func grantParts(cands []partCandidate, budget int) []int {
	order := make([]int, len(cands))
	used := 0
	for i, c := range cands {
		order[i] = i
		if c.granted {
			used++
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cands[a].last.Compare(cands[b].last) })
	var picked []int
	for _, i := range order {
		switch {
		case cands[i].granted:
			picked = append(picked, i)
		case budget <= 0 || used < budget:
			picked = append(picked, i)
			used++
		}
	}
	return picked
}

// partsDue says whether this reconcile checks the object's parts although nothing changed: in DriftModeList when
// the scanner granted it (the grant is taken), in DriftModeUpdate when the sync period passed.
func (r *Reconciler[T]) partsDue(obj T, syncDue bool) bool {
	_, granted := r.partGrants.LoadAndDelete(obj.GetUID())
	if r.Mode != DriftModeList {
		return syncDue
	}
	return granted
}

// grantPartReads grants the periodic part checks of the group's candidates (see grantParts) and enqueues them. It
// returns false when ctx ended.
func (s *driftScanner[T]) grantPartReads(ctx context.Context, g *scanGroup[T]) bool {
	objs := make([]T, 0, len(g.parts))
	cands := make([]partCandidate, 0, len(g.parts))
	for _, obj := range g.parts {
		if _, drifted := s.r.drifted.Load(obj.GetUID()); drifted {
			continue // its update syncs its parts too
		}
		_, granted := s.r.partGrants.Load(obj.GetUID())
		c := partCandidate{granted: granted}
		if last := s.r.Kind.State(obj).Sync.LastSyncTime; last != nil {
			c.last = last.Time
		}
		objs, cands = append(objs, obj), append(cands, c)
	}
	for _, i := range grantParts(cands, s.r.PartReads) {
		obj := objs[i]
		s.r.partGrants.Store(obj.GetUID(), struct{}{})
		select {
		case s.events <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// partsCandidate says whether parts, as declared (checks are their conditions), take a share of the budget.
func partsCandidate(parts *declaredParts, checks []RefCheck) bool {
	return parts != nil && parts.periodic && blocking(checks) == nil
}
