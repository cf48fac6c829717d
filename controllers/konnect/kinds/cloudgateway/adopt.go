package cloudgateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Taking over what already exists, and keeping it equal to the spec.
//
// spec.adopt (as in Kong's operator) names an entity by its Konnect ID: it is read, and taken over if it equals the
// spec (mode match) or can be made equal (mode override: the fields Konnect's update operation changes are sent;
// the others must be equal already, as Konnect cannot change them). Networks and transit gateways carry no tags, so
// a create whose answer was lost leaves nothing that names the object: before creating, the kind's look-up finds
// an entity of the spec's name (names are unique in an organization, and among a network's transit gateways) and
// takes it over instead of creating a duplicate. On every read the fields Konnect can change (a network's name, an
// AWS transit gateway's cidr_blocks) are compared with the spec, and a difference (a changed spec, or an edit made
// in Konnect) is sent as an update.

// differences are what an entity in Konnect has otherwise than the spec: fields the kind's update operation changes,
// and fields Konnect cannot change.
type differences struct {
	updatable, immutable []string
}

func (d differences) all() []string {
	return append(append([]string(nil), d.updatable...), d.immutable...)
}

// adoptable is an object whose kind has spec.adopt.
type adoptable interface {
	GetAdoptOptions() *configurationv1alpha1.AdoptOptions
}

func adoptOptions(obj client.Object) *configurationv1alpha1.AdoptOptions {
	if a, ok := obj.(adoptable); ok {
		return a.GetAdoptOptions()
	}
	return nil
}

// adoptError is an adoption refused: its reason is the Programmed condition's.
type adoptError struct {
	reason string
	err    error
}

func (e *adoptError) Error() string { return e.err.Error() }
func (e *adoptError) Unwrap() error { return e.err }

// adopt reads the entity spec.adopt names and takes it over (see above); the status then holds its ID.
func (r *reconciler[T]) adopt(ctx context.Context, api konnectapi.API, obj T, s scope, o *configurationv1alpha1.AdoptOptions) (observed, error) {
	if o.From != configurationv1alpha1.AdoptSourceKonnect || o.Konnect == nil {
		return observed{}, &adoptError{konnectv1alpha1.ReasonAdoptionFailed, fmt.Errorf("spec.adopt: from must be konnect, with konnect.id")}
	}
	r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{ID: o.Konnect.ID}, s.parent, nil)
	read := r.kind.read
	if read == nil {
		read = r.kind.get
	}
	actual, err := read(ctx, api, obj, s)
	if err != nil {
		r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{}, "", nil)
		if konnectapi.IsNotFound(err) {
			err = fmt.Errorf("spec.adopt: no %s with ID %s in Konnect: %w", r.kind.name, o.Konnect.ID, err)
		}
		return observed{}, &adoptError{konnectv1alpha1.ReasonAdoptionFailed, err}
	}
	d := r.kind.drift(obj, actual, s)
	switch {
	case o.Mode == configurationv1alpha1.AdoptModeMatch && len(d.all()) > 0:
		r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{}, "", nil)
		return observed{}, &adoptError{konnectv1alpha1.ReasonAdoptionMismatch, fmt.Errorf(
			"spec.adopt (mode match): the %s %s in Konnect differs from the spec in %s; make the spec equal, or use mode override",
			r.kind.name, o.Konnect.ID, strings.Join(d.all(), ", "))}
	case len(d.immutable) > 0:
		r.kind.record(obj, konnectv1alpha1.KonnectEntityStatus{}, "", nil)
		return observed{}, &adoptError{konnectv1alpha1.ReasonAdoptionFailed, fmt.Errorf(
			"spec.adopt: the %s %s in Konnect differs from the spec in %s, which Konnect cannot change; make the spec equal",
			r.kind.name, o.Konnect.ID, strings.Join(d.immutable, ", "))}
	}
	ctrl.LoggerFrom(ctx).Info("adopted an existing Konnect entity", "id", o.Konnect.ID, "mode", string(o.Mode), "kind", r.kind.name)
	return r.converge(ctx, api, obj, s, actual)
}

// converge sends the update of the fields in which the entity differs from the spec, if any.
func (r *reconciler[T]) converge(ctx context.Context, api konnectapi.API, obj T, s scope, actual observed) (observed, error) {
	if r.kind.drift == nil || r.kind.update == nil || len(r.kind.drift(obj, actual, s).updatable) == 0 {
		return actual, nil
	}
	return r.kind.update(ctx, api, obj, s)
}

// adoptFailure reports a refused adoption; it waits for a change of the object unless Konnect may answer
// otherwise later.
func (r *reconciler[T]) adoptFailure(obj T, err error) (reconcile.Result, error) {
	var ae *adoptError
	if !errors.As(err, &ae) {
		r.setProgrammed(obj, metav1.ConditionFalse, konnectv1alpha1.ReasonAdoptionFailed, err.Error())
		return reconcile.Result{}, failure(err)
	}
	r.setProgrammed(obj, metav1.ConditionFalse, ae.reason, ae.Error())
	if ae.reason == konnectv1alpha1.ReasonAdoptionMismatch || !errors.As(err, new(*konnectapi.APIError)) {
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	return reconcile.Result{}, failure(ae.err)
}

// nameTaken: the look-up before a create found an entity of the spec's name that differs from the spec in fields
// Konnect cannot change, so it is not the one a lost create made. It waits for a change of the object.
type nameTaken struct {
	kind, name, id string
	fields         []string
}

func (e *nameTaken) Error() string {
	return fmt.Sprintf("a %s named %q already exists in Konnect (ID %s) and differs from the spec in %s, which Konnect cannot change: choose another name, or make the spec equal to take it over",
		e.kind, e.name, e.id, strings.Join(e.fields, ", "))
}

// takeOverFound returns the entity found by name, or a nameTaken if it differs in fields Konnect cannot change.
func (r *reconciler[T]) takeOverFound(ctx context.Context, obj T, s scope, found observed) (observed, error) {
	if d := r.kind.drift(obj, found, s); len(d.immutable) > 0 {
		return observed{}, &nameTaken{kind: r.kind.name, name: found.Name, id: found.ID, fields: d.immutable}
	}
	ctrl.LoggerFrom(ctx).Info("took over the entity of the spec's name a lost create made", "id", found.ID, "kind", r.kind.name)
	return found, nil
}
