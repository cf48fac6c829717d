// Package credentials holds the credential kinds of Kong's operator: KongCredentialAPIKey, KongCredentialBasicAuth,
// KongCredentialACL, KongCredentialJWT and KongCredentialHMAC. Each is a credential of the KongConsumer its
// spec.consumerRef names, written with the same Konnect calls as a consumer's Secret-labelled credentials
// (konnectapi's CreateCredential, UpdateCredential, DeleteCredential and Credentials) once the consumer is
// Programmed. The generic entity loop reaches them through Clients, which serves a credential type's entity calls
// with those calls, the consumer's Konnect ID taken from the scope konnectapi.InParent(control plane, consumer).
package credentials

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// indexConsumerRef finds the credentials of a KongConsumer.
const indexConsumerRef = "konnect.consumerRef"

// Names are the credential kinds, first shipped together (bundle 1.8.0).
var Names = []string{"KongCredentialAPIKey", "KongCredentialBasicAuth", "KongCredentialACL", "KongCredentialJWT", "KongCredentialHMAC"}

// consumerParent is a credential's reference to its KongConsumer: the consumer must exist in Konnect.
var consumerParent = kindbase.Parent[*configurationv1.KongConsumer]{
	Kind: "KongConsumer", Condition: konnectv1alpha1.ConditionKongConsumerRefValid,
	New: func() *configurationv1.KongConsumer { return &configurationv1.KongConsumer{} },
	Konnect: func(o *configurationv1.KongConsumer) *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef {
		return o.Status.Konnect
	},
}

// EntityType is the entity type of credentials of type t, as Clients serves it.
func EntityType(t konnectapi.CredentialType) konnectapi.EntityType {
	return konnectapi.EntityType(string(t) + " credential")
}

// credentialType is the credential type of an entity type made by EntityType.
func credentialType(t konnectapi.EntityType) (konnectapi.CredentialType, bool) {
	ct, ok := strings.CutSuffix(string(t), " credential")
	return konnectapi.CredentialType(ct), ok
}

// splitScope splits a scope made by konnectapi.InParent into the control plane and consumer IDs.
func splitScope(scope string) (cpID, consumerID string) {
	cpID, consumerID, _ = strings.Cut(scope, "/")
	return cpID, consumerID
}

// kind describes one credential kind: how to read its object.
type kind[T client.Object] struct {
	name   string
	t      konnectapi.CredentialType
	new    func() T
	list   func() client.ObjectList
	items  func(client.ObjectList) []T
	refs   func(T) *configurationv1alpha1.KongCredentialRefs
	status func(T) *configurationv1alpha1.KongCredentialStatus
	// fields is the credential's body without tags.
	fields func(T) map[string]any
	// keys are the body keys compared for drift (nil: all): not a basic-auth password, which Konnect stores hashed.
	keys []string
	// writeOnly are the body keys Konnect answers only hashed (entity.Kind's WriteOnly).
	writeOnly []string
}

// build makes the entity.Kind of a credential kind.
func (k kind[T]) build() entity.Kind[T] {
	return entity.Kind[T]{Mapping: kindbase.Mapping[T]{
		Kind:       k.name,
		EntityType: EntityType(k.t),
		NewObject:  k.new,
		NewObjects: k.list,
		ItemsOf:    k.items,
		IsManaged:  func(T) bool { return true },
		Refs:       k.resolve,
		Body: func(o T, _ entity.Refs) (map[string]any, error) {
			body := k.fields(o)
			body["tags"] = kindbase.StringsToAny(entity.IdentityTags(k.name, o, k.refs(o).Tags))
			return body, nil
		},
		Keys:     k.keys,
		Conds:    func(o T) *[]metav1.Condition { return &k.status(o).Conditions },
		GetState: k.state,
		PutState: k.setState,
		RefIndexes: []entity.RefIndex{
			consumerParent.Index(indexConsumerRef, func(o client.Object) string { return k.refs(o.(T)).ConsumerRef.Name }),
		},
		Scope: k.deletionScope,
	}, WriteOnly: k.writeOnly}
}

// resolve: the KongConsumer must exist in Konnect; then its control plane and auth configuration must be valid (the
// consumer's reference, checked as the consumer's). The control plane ID of the refs is the scope
// InParent(control plane, consumer), which Clients reads.
func (k kind[T]) resolve(ctx context.Context, c client.Reader, o T) (entity.Refs, []entity.RefCheck, error) {
	consumer, consumerID, check, err := consumerParent.Read(ctx, c, o.GetNamespace(), k.refs(o).ConsumerRef.Name)
	if err != nil || !check.OK {
		if s := k.status(o).Konnect; s != nil && s.ID != "" {
			// Konnect deletes a consumer's credentials with it.
			check.Message += fmt.Sprintf("; the credential %s in Konnect is deleted with its consumer, and is created again once the consumer exists in Konnect", s.ID)
		}
		return entity.Refs{}, []entity.RefCheck{check}, err
	}
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongConsumer", consumer.Namespace, consumer.Spec.ControlPlaneRef)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	if refs.ControlPlaneID != "" {
		refs.ControlPlaneID = konnectapi.InParent(refs.ControlPlaneID, consumerID)
	}
	refs.ParentID = consumerID
	return refs, append([]entity.RefCheck{check}, checks...), nil
}

// state reads status.konnect, its control plane ID as the scope InParent(control plane, consumer).
func (k kind[T]) state(o T) entity.State {
	s := k.status(o)
	if s.Konnect == nil {
		return entity.State{Sync: s.SyncStatus}
	}
	st := kindbase.StateInControlPlane(&s.Konnect.KonnectEntityStatusWithControlPlaneRef, s.SyncStatus)
	st.ParentID = s.Konnect.ConsumerID
	if st.ControlPlaneID != "" {
		st.ControlPlaneID = konnectapi.InParent(st.ControlPlaneID, s.Konnect.ConsumerID)
	}
	return st
}

// setState writes status.konnect: controlPlaneID and consumerID apart.
func (k kind[T]) setState(o T, st entity.State) {
	cpID, consumerID := splitScope(st.ControlPlaneID)
	st.ControlPlaneID = cpID
	s := k.status(o)
	s.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneAndConsumerRefs{
		KonnectEntityStatusWithControlPlaneRef: *kindbase.StatusInControlPlane(st), ConsumerID: consumerID,
	}
	s.SyncStatus = st.Sync
}

// deletionScope is the auth configuration of the control plane the credential was placed in (found by its ID, as
// for every entity of a control plane) and the scope of the credential's consumer.
func (k kind[T]) deletionScope(ctx context.Context, c client.Reader, o T, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	if st.ControlPlaneID == "" {
		return kindbase.DeletionScopeInControlPlane(ctx, c, o, st, k.resolve)
	}
	cpID, consumerID := splitScope(st.ControlPlaneID)
	st.ControlPlaneID = cpID
	auth, _, err := kindbase.DeletionScopeInControlPlane(ctx, c, o, st, k.resolve)
	return auth, konnectapi.InParent(cpID, consumerID), err
}
