package konnect

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Optional abilities of a Kind, for what only some kinds have. The reconciler checks for them with a type
// assertion, so the common loop stays the same for every kind.

// mirrorKind is implemented by kinds whose objects may stand for an entity that exists in Konnect already (source
// Mirror): the operator looks it up by ID and never creates, updates or deletes it.
type mirrorKind[T client.Object] interface {
	// MirrorID is the Konnect ID the object mirrors, "" when the object is not a mirror.
	MirrorID(obj T) string
	// Referrers counts the objects that still use the mirror; deleting the mirror waits for them, so that their
	// entities are deleted from Konnect through it (Konnect keeps a mirrored control plane, and with it anything
	// left inside).
	Referrers(ctx context.Context, c client.Reader, obj T) (int, error)
}

// observerKind is implemented by kinds that copy what Konnect reports about the entity into the object's status.
type observerKind[T client.Object] interface {
	Observe(obj T, e Entity)
}

// partsKind is implemented by kinds whose entity has parts that Konnect keeps apart from its body: a control plane
// group's members, a consumer's credentials.
type partsKind[T client.Object] interface {
	// Parts reads what the object declares for its parts. nil means there is nothing to sync (none declared, and
	// none left from an earlier declaration). Parts are hashed with the
	// body to notice changes, so they must not hold secret values (name the Secret's resourceVersion instead).
	// A failed check that is not Advisory keeps the parts from being synced; the entity itself still is.
	Parts(ctx context.Context, c client.Reader, obj T) (any, []RefCheck, error)
	// SyncParts brings the parts of entity id to the declared ones. It reads them first and writes only what
	// differs; changed says the declaration changed, so parts Konnect cannot show back (hashed passwords) are
	// rewritten too.
	SyncParts(ctx context.Context, api API, refs Refs, id string, parts any, changed bool) error
}

// splitAbsent separates the checks whose condition is to be removed.
func splitAbsent(checks []RefCheck) (present, absent []RefCheck) {
	for _, c := range checks {
		if c.Absent {
			absent = append(absent, c)
		} else {
			present = append(present, c)
		}
	}
	return present, absent
}

// blocking returns the first failed check that blocks.
func blocking(checks []RefCheck) *RefCheck {
	for i, c := range checks {
		if !c.OK && !c.Advisory && !c.Absent {
			return &checks[i]
		}
	}
	return nil
}
