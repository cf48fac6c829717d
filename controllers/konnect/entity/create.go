package entity

import (
	"context"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/bodydiff"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/controllers/konnect/konnectmetrics"
)

// Exactly-once creates: every entity carries its object's k8s-uid tag, so a create whose answer was lost (or that
// another process sent) is found and adopted instead of being created twice.

// create creates the entity, or adopts the one an earlier attempt created (found by its k8s-uid tag) if one may
// exist, so that a create whose response was lost never leaves a duplicate.
func (r *Reconciler[T]) create(ctx context.Context, obj T, p *pass) (konnectapi.Entity, error) {
	if !skipLookupBeforeCreate && !p.neverSent && r.mayHaveBeenCreated(obj) {
		if e, err := r.adopt(ctx, obj, p); err != nil || e.ID != "" {
			return e, err
		}
	}
	r.attempted.Store(obj.GetUID(), struct{}{})
	e, err := p.api.Create(ctx, r.Kind.Type(), p.refs.ControlPlaneID, p.desired)
	if konnectapi.IsConflict(err) || konnectapi.IsBadRequest(err) {
		// A unique-name violation (409, or 400 "data constraint error" for core entities) may be our own earlier
		// create; otherwise the name belongs to someone else and the error stands.
		if found, aerr := r.adopt(ctx, obj, p); aerr != nil || found.ID != "" {
			return found, aerr
		}
	}
	return e, err
}

// adopt finds the entity of an earlier create by the object's k8s-uid tag and brings it to the desired body; an
// empty Entity means there is none.
func (r *Reconciler[T]) adopt(ctx context.Context, obj T, p *pass) (konnectapi.Entity, error) {
	ctx = konnectapi.WithOperation(ctx, konnectmetrics.OperationAdopt)
	found, err := r.earlierCreate(ctx, obj, p)
	if err == nil && r.Kind.DedupeKey != nil && len(found) > 0 {
		// Found by content, not by the object's tag: it may be another object's.
		found, err = r.unclaimed(ctx, obj, found)
	}
	if err != nil || len(found) == 0 {
		return konnectapi.Entity{}, err
	}
	e := found[0]
	ctrl.LoggerFrom(ctx).Info("adopting the Konnect entity of an earlier create", "id", e.ID, "kind", r.Kind.Name())
	// The earlier create may have sent an older spec.
	if bodydiff.Drifted(p.desired, e.Body, r.Kind.DriftKeys()) {
		return p.api.Update(ctx, r.Kind.Type(), p.refs.ControlPlaneID, e.ID, p.desired)
	}
	return e, nil
}

// earlierCreate lists what an earlier create of obj may have made: the entities with its k8s-uid tag or, for a kind
// on which Konnect keeps no tags, those of its control plane with the dedupe key of the desired body.
func (r *Reconciler[T]) earlierCreate(ctx context.Context, obj T, p *pass) ([]konnectapi.Entity, error) {
	if r.Kind.DedupeKey == nil {
		return p.api.List(ctx, r.Kind.Type(), p.refs.ControlPlaneID, UIDTag(obj))
	}
	all, err := p.api.List(ctx, r.Kind.Type(), p.refs.ControlPlaneID, "")
	if err != nil {
		return nil, err
	}
	key := r.Kind.DedupeKey(p.desired)
	var out []konnectapi.Entity
	for _, e := range all {
		if key != "" && r.Kind.DedupeKey(e.Body) == key {
			out = append(out, e)
		}
	}
	return out, nil
}

// mayHaveBeenCreated says whether an entity for obj may exist without the object knowing its ID. (An object read
// without the finalizer was never sent: create skips the look-up for it before asking.)
func (r *Reconciler[T]) mayHaveBeenCreated(obj T) bool {
	if _, ok := r.attempted.Load(obj.GetUID()); ok {
		return true
	}
	// A Programmed condition other than "references invalid" means an earlier reconcile got as far as Konnect.
	if c := apimeta.FindStatusCondition(*r.Kind.Conditions(obj), konnectv1alpha1.ConditionProgrammed); c != nil &&
		c.Reason != konnectv1alpha1.ReasonInvalidReference {
		return true
	}
	since := r.since.Load()
	return since == 0 || obj.GetCreationTimestamp().Time.Before(time.Unix(0, since).Add(lookupMargin))
}
