package entity

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Mapping adapts one Kubernetes kind to the generic reconciler: which references it has, what it looks like in
// Konnect, and where its status lives. Everything else (the loop, the client, drift detection) is shared.
type Mapping[T client.Object] interface {
	// Name is the Kubernetes kind, e.g. "KongService".
	Name() string
	// Type is the Konnect entity type.
	Type() konnectapi.EntityType
	New() T
	NewList() client.ObjectList
	Items(list client.ObjectList) []T
	// Managed says whether the object is this operator's (e.g. not configuration for Kong Ingress Controller).
	Managed(obj T) bool
	// Resolve follows the object's references in order and reports each one as a condition. It stops at the first
	// invalid one; refs is complete only when every check is OK. An error is a failed read (transient).
	Resolve(ctx context.Context, c client.Reader, obj T) (Refs, []RefCheck, error)
	// Desired is the Konnect body the object declares, including the identity tags (labels for control planes).
	Desired(obj T, refs Refs) (map[string]any, error)
	// DriftKeys are the body keys compared for drift; nil compares every key of Desired.
	DriftKeys() []string
	// Conditions is the object's status.conditions.
	Conditions(obj T) *[]metav1.Condition
	State(obj T) State
	SetState(obj T, s State)
	// Indexes are the field indexes of the references, for the watches that re-reconcile referrers.
	Indexes() []RefIndex
	// DeletionScope finds the auth configuration (and Konnect control plane ID) through which the entity of obj,
	// whose state is st, is deleted. A nil auth means there is nothing that can or needs to be deleted (never
	// created, or its control plane object or auth configuration is gone, and with it the entity).
	DeletionScope(ctx context.Context, c client.Reader, obj T, st State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error)
}

// Kind is a Mapping together with the abilities only some kinds have. A nil (or false) field is an ability the
// kind has not got; the loop checks the field, so it is the same for every kind.
type Kind[T client.Object] struct {
	Mapping[T]
	// Mirror is set for kinds whose objects may stand for an entity that exists in Konnect already.
	Mirror Mirror[T]
	// Observe, when set, copies what Konnect reports about the entity into the object's status.
	Observe func(obj T, e konnectapi.Entity)
	// Parts is set (with WithParts) for kinds whose entity has parts that Konnect keeps apart from its body.
	Parts *Parts[T]
	// RecreateWhenGone: Konnect's update of this type is a patch, not an upsert, so an entity deleted out of band
	// answers the update with 404 and is created anew (it cannot be re-created with its old ID).
	RecreateWhenGone bool
	// Hashed, when set, is what of the desired body goes into the object's observedHash: a body holding values read
	// from a Secret is hashed with the Secret's name and resourceVersion in their place, so no hash of a secret
	// value is ever written to the status.
	Hashed func(refs Refs, desired map[string]any) map[string]any
	// DedupeKey, when set, identifies the entity of a kind on which Konnect keeps no tags (a data plane client
	// certificate: its PEM) among the entities of its control plane: a create that may repeat an earlier one whose
	// answer was lost looks the entity up by it, where other kinds look it up by the k8s-uid tag.
	DedupeKey func(body map[string]any) string
	// WriteOnly are body keys Konnect keeps in a form it does not answer back (a basic-auth password, hashed): a
	// write of the entity's body as listed (re-tagging) takes their values from the object's desired body instead.
	WriteOnly []string
	// Follows are objects the kind's objects depend on without naming them (no RefIndex can find the objects):
	// a change of one re-reconciles the objects its Map returns.
	Follows []Follow
}

// Follow re-reconciles objects of a kind when a Target object changes: Map returns their keys (read from the cache).
type Follow struct {
	Target client.Object
	Map    func(ctx context.Context, c client.Reader, target client.Object) []types.NamespacedName
}

// Mirror is the ability of kinds whose objects may stand for an entity that exists in Konnect already (source
// Mirror): the operator looks it up by ID and never creates, updates or deletes it.
type Mirror[T client.Object] interface {
	// MirrorID is the Konnect ID the object mirrors, "" when the object is not a mirror.
	MirrorID(obj T) string
	// Lookup reads the mirrored entity. A missing one is an *APIError with StatusCode 404.
	Lookup(ctx context.Context, api konnectapi.API, id string) (konnectapi.Entity, error)
	// Referrers counts the objects that still use the mirror; deleting the mirror waits for them, so that their
	// entities are deleted from Konnect through it (Konnect keeps a mirrored control plane, and with it anything
	// left inside).
	Referrers(ctx context.Context, c client.Reader, obj T) (int, error)
}

// PartsOf is implemented by kinds whose entity has parts of type P that Konnect keeps apart from its body: a
// control plane group's members, a consumer's credentials.
type PartsOf[T client.Object, P any] interface {
	// DeclaredParts reads what the object declares for its parts. ok false means there is nothing to sync (none
	// declared, and none left from an earlier declaration). Parts are hashed with the body to notice changes, so
	// they must not hold secret values (name the Secret's resourceVersion instead). A failed check that is not
	// Advisory keeps the parts from being synced; the entity itself still is.
	DeclaredParts(ctx context.Context, c client.Reader, obj T) (parts P, ok bool, checks []RefCheck, err error)
	// SyncParts brings the parts of entity id to the declared ones. It reads them first and writes only what
	// differs; changed says the declaration changed, so parts Konnect cannot show back (hashed passwords) are
	// rewritten too.
	SyncParts(ctx context.Context, api konnectapi.API, refs Refs, id string, parts P, changed bool) error
}

// PeriodicParts is implemented by a PartsOf whose periodic check (SyncParts with changed false) calls Konnect for
// some declarations only: Periodic says whether it does for parts. Parts that cost no call take no share of the
// part reads budget (see Options.PartReads).
type PeriodicParts[P any] interface {
	Periodic(parts P) bool
}

// Parts is a kind's PartsOf with the type of its parts kept inside, so that Kind needs no second type parameter.
type Parts[T client.Object] struct {
	read func(ctx context.Context, c client.Reader, obj T) (*declaredParts, []RefCheck, error)
}

// WithParts makes the Parts of a Kind.
func WithParts[T client.Object, P any](p PartsOf[T, P]) *Parts[T] {
	return &Parts[T]{read: func(ctx context.Context, c client.Reader, obj T) (*declaredParts, []RefCheck, error) {
		parts, ok, checks, err := p.DeclaredParts(ctx, c, obj)
		if err != nil || !ok {
			return nil, checks, err
		}
		periodic := true
		if pp, ok := p.(PeriodicParts[P]); ok {
			periodic = pp.Periodic(parts)
		}
		return &declaredParts{hashed: parts, periodic: periodic, sync: func(ctx context.Context, api konnectapi.API, refs Refs, id string, changed bool) error {
			return p.SyncParts(ctx, api, refs, id, parts, changed)
		}}, checks, nil
	}}
}

// declaredParts are the parts an object declares: what is hashed, and how they are brought to Konnect.
type declaredParts struct {
	hashed any
	// periodic: a periodic check of the parts calls Konnect (PeriodicParts).
	periodic bool
	sync     func(ctx context.Context, api konnectapi.API, refs Refs, id string, changed bool) error
}

// hash is what StateHash includes of the parts: nothing when there are none.
func (p *declaredParts) hash() any {
	if p == nil {
		return nil
	}
	return p.hashed
}

// Refs are the resolved references of an object.
type Refs struct {
	Auth           *konnectv1alpha1.KonnectAPIAuthConfiguration
	ControlPlaneID string
	ServiceID      string
	// ParentID is the Konnect ID of the entity a nested entity belongs to (a target's upstream, an SNI's
	// certificate, a key's key set).
	ParentID string
	// Scope are the Konnect IDs of what a plugin is scoped to, by body field (service, route, consumer,
	// consumer_group).
	Scope map[string]string
	// Found is what Resolve read for Desired besides IDs (a KongPluginBinding's plugin configuration).
	Found any
}

// RefCheck is the outcome of checking one reference, as a condition.
type RefCheck struct {
	Type    string
	OK      bool
	Message string
	// Reason overrides the condition's reason (default Valid or InvalidReference).
	Reason string
	// Advisory: a failure sets the condition but blocks nothing.
	Advisory bool
	// Absent: the object has nothing to check here; the condition is removed.
	Absent bool
}

// State is the Konnect part of an object's status, whichever shape its kind gives it.
type State struct {
	ID, OrgID, ServerURL, ControlPlaneID, ServiceID, ParentID string
	Sync                                                      konnectv1alpha1.SyncStatus
}

// RefIndex is a field index of one reference: objects of the kind are found by the referenced object's name.
type RefIndex struct {
	// Field is the index name.
	Field string
	// Target is the kind of the referenced object.
	Target client.Object
	// Extract returns the names the object references through this field.
	Extract func(client.Object) []string
	// Key, when set, is the index value of a referenced object (e.g. namespace/name), and its referrers are looked
	// up in every namespace; unset, they are looked up by its name in its own namespace.
	Key func(target client.Object) string
}
