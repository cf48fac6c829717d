package kindbase

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Mapping is an entity.Mapping written as a description: the functions a kind whose entity lives in a control
// plane declares. Scope may be nil (the auth configuration of the control plane the entity was placed in, see
// DeletionScopeInControlPlane); Keys nil compares every key of the desired body for drift.
type Mapping[T client.Object] struct {
	Kind       string
	EntityType konnectapi.EntityType
	NewObject  func() T
	NewObjects func() client.ObjectList
	ItemsOf    func(client.ObjectList) []T
	IsManaged  func(T) bool
	Refs       func(ctx context.Context, c client.Reader, obj T) (entity.Refs, []entity.RefCheck, error)
	Body       func(obj T, refs entity.Refs) (map[string]any, error)
	Keys       []string
	Conds      func(T) *[]metav1.Condition
	GetState   func(T) entity.State
	PutState   func(T, entity.State)
	RefIndexes []entity.RefIndex
	Scope      func(ctx context.Context, c client.Reader, obj T, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error)
}

var _ entity.Mapping[client.Object] = Mapping[client.Object]{}

func (m Mapping[T]) Name() string                         { return m.Kind }
func (m Mapping[T]) Type() konnectapi.EntityType          { return m.EntityType }
func (m Mapping[T]) New() T                               { return m.NewObject() }
func (m Mapping[T]) NewList() client.ObjectList           { return m.NewObjects() }
func (m Mapping[T]) Items(l client.ObjectList) []T        { return m.ItemsOf(l) }
func (m Mapping[T]) Managed(obj T) bool                   { return m.IsManaged(obj) }
func (m Mapping[T]) DriftKeys() []string                  { return m.Keys }
func (m Mapping[T]) Conditions(obj T) *[]metav1.Condition { return m.Conds(obj) }
func (m Mapping[T]) State(obj T) entity.State             { return m.GetState(obj) }
func (m Mapping[T]) SetState(obj T, st entity.State)      { m.PutState(obj, st) }
func (m Mapping[T]) Indexes() []entity.RefIndex           { return m.RefIndexes }

func (m Mapping[T]) Resolve(ctx context.Context, c client.Reader, obj T) (entity.Refs, []entity.RefCheck, error) {
	return m.Refs(ctx, c, obj)
}

func (m Mapping[T]) Desired(obj T, refs entity.Refs) (map[string]any, error) {
	return m.Body(obj, refs)
}

func (m Mapping[T]) DeletionScope(ctx context.Context, c client.Reader, obj T, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	if m.Scope != nil {
		return m.Scope(ctx, c, obj, st)
	}
	return DeletionScopeInControlPlane(ctx, c, obj, st, m.Refs)
}

// Parent is a reference of a nested entity to the object of its parent (a target's KongUpstream).
type Parent[P client.Object] struct {
	// Kind of the parent object and Condition reporting the reference.
	Kind, Condition string
	New             func() P
	// Konnect is the parent's Konnect status.
	Konnect func(P) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef
}

// Read reads the parent named name in namespace and checks that it exists in Konnect and is not being deleted.
// An error is a failed read (transient).
func (p Parent[P]) Read(ctx context.Context, c client.Reader, namespace, name string) (P, string, entity.RefCheck, error) {
	check := entity.RefCheck{Type: p.Condition}
	obj := p.New()
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("%s %s/%s not found", p.Kind, namespace, name)
			return obj, "", check, nil
		}
		return obj, "", check, err
	}
	k := p.Konnect(obj)
	if !obj.GetDeletionTimestamp().IsZero() || k == nil || k.ID == "" {
		check.Message = fmt.Sprintf("%s %s/%s does not exist in Konnect yet (or is being deleted)", p.Kind, namespace, name)
		return obj, "", check, nil
	}
	check.OK, check.Message = true, fmt.Sprintf("%s %s/%s exists in Konnect", p.Kind, namespace, name)
	return obj, k.ID, check, nil
}

// Index is the field index of the parent reference named field: objects of a kind found by their parent's name.
func (p Parent[P]) Index(field string, name func(client.Object) string) entity.RefIndex {
	return entity.RefIndex{Field: field, Target: p.New(), Extract: func(o client.Object) []string {
		if n := name(o); n != "" {
			return []string{n}
		}
		return nil
	}}
}
