package entity

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Claims. A create whose answer may have been lost looks for the entity it may have made before creating one. For
// most kinds that look-up is by the object's k8s-uid tag, so what it finds is the object's own. A kind on which
// Konnect keeps no tags looks it up by its DedupeKey (a data plane client certificate by its PEM), and another
// object declaring the same may own what is found: that entity is not adopted (two objects sharing one entity
// would delete it under each other), the object is not Programmed (ReasonEntityClaimed) and nothing is written.

// claimed is an entity found for an object that belongs to another object.
type claimed struct {
	kind, entityType, id, owner string
}

func (c *claimed) Error() string {
	return fmt.Sprintf("the %s %s in Konnect holding what this %s declares belongs to %s, so it is not adopted and nothing is written; "+
		"two objects cannot share one Konnect entity: delete one of them, or change what this one declares", c.entityType, c.id, c.kind, c.owner)
}

// isClaimed says whether err is an entity refused because another object owns it.
func isClaimed(err error) bool {
	var c *claimed
	return errors.As(err, &c)
}

// unclaimed returns the entities found for obj that no other object owns, and an error naming the owner when every
// one of them is another object's.
func (r *Reconciler[T]) unclaimed(ctx context.Context, obj T, found []konnectapi.Entity) ([]konnectapi.Entity, error) {
	var free []konnectapi.Entity
	var refused error
	for _, e := range found {
		owner, err := r.owner(ctx, obj, e)
		if err != nil {
			return nil, err
		}
		if owner == "" {
			free = append(free, e)
		} else if refused == nil {
			refused = &claimed{kind: r.Kind.Name(), entityType: string(r.Kind.Type()), id: e.ID, owner: owner}
		}
	}
	if len(free) > 0 {
		return free, nil
	}
	return nil, refused
}

// owner names the other object entity e belongs to, "" when it is not another object's: its k8s-uid tag names
// another object, or another object of the kind has its ID (in the cache, or as this process last wrote it).
func (r *Reconciler[T]) owner(ctx context.Context, obj T, e konnectapi.Entity) (string, error) {
	uid := TagValue(e.Body["tags"], TagUID)
	if uid == string(obj.GetUID()) {
		return "", nil
	}
	list := r.Kind.NewList()
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return "", fmt.Errorf("listing %s objects: %w", r.Kind.Name(), err)
	}
	for _, o := range r.Kind.Items(list) {
		if o.GetUID() != obj.GetUID() && (string(o.GetUID()) == uid || r.Kind.State(o).ID == e.ID) {
			return fmt.Sprintf("%s %s/%s", r.Kind.Name(), o.GetNamespace(), o.GetName()), nil
		}
	}
	if uid == "" {
		r.written.Range(func(k, v any) bool {
			if k != obj.GetUID() && v.(written).state.ID == e.ID {
				uid = fmt.Sprint(k)
			}
			return uid == ""
		})
	}
	if uid != "" {
		return fmt.Sprintf("the %s with k8s-uid %s", r.Kind.Name(), uid), nil
	}
	return "", nil
}
