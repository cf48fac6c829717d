package entity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/bodydiff"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Adopting what already exists (spec.adopt, as in Kong's operator): instead of creating its entity, an object takes
// over the one spec.adopt names, by its Konnect ID. With mode match it does so only if the entity already equals
// the spec (its identity tags aside), and otherwise reports the fields that differ and writes nothing; with mode
// override it makes the entity equal to the spec. Either way the entity gets the object's identity tags (one update
// with the same ID), so from then on it is the object's like any other: updated, brought back after out-of-band
// edits, deleted with the object.

// adoptable is an object whose kind has spec.adopt.
type adoptable interface {
	GetAdoptOptions() *configurationv1alpha1.AdoptOptions
}

// adoptOptions returns obj's spec.adopt, if its kind has one and it is set.
func adoptOptions(obj any) *configurationv1alpha1.AdoptOptions {
	if a, ok := obj.(adoptable); ok {
		return a.GetAdoptOptions()
	}
	return nil
}

// mismatch is a match-mode adoption refused: the entity differs from the spec in fields.
type mismatch struct {
	kind, id string
	fields   []string
}

func (m *mismatch) Error() string {
	return fmt.Sprintf("spec.adopt (mode match): the %s %s in Konnect differs from the spec in %s; make the spec equal, or use mode override to make the entity equal to the spec",
		m.kind, m.id, strings.Join(m.fields, ", "))
}

// isMismatch says whether err is a match-mode adoption refused (it waits for a change of the object).
func isMismatch(err error) bool {
	var m *mismatch
	return errors.As(err, &m)
}

// adoptExisting takes over the entity o names instead of creating one, and returns it as Konnect answered.
func (r *Reconciler[T]) adoptExisting(ctx context.Context, obj T, p *pass, o *configurationv1alpha1.AdoptOptions) (konnectapi.Entity, *failure) {
	if o.From != configurationv1alpha1.AdoptSourceKonnect || o.Konnect == nil {
		return konnectapi.Entity{}, &failure{konnectv1alpha1.ReasonAdoptionFailed, "adopt", fmt.Errorf("spec.adopt: from must be konnect, with konnect.id")}
	}
	id := o.Konnect.ID
	actual, err := p.api.Get(ctx, r.Kind.Type(), p.refs.ControlPlaneID, id)
	if err != nil {
		if konnectapi.IsNotFound(err) {
			err = fmt.Errorf("no %s with ID %s in control plane %s: %w", r.Kind.Type(), id, p.refs.ControlPlaneID, err)
		}
		return konnectapi.Entity{}, &failure{konnectv1alpha1.ReasonAdoptionFailed, "adopt", err}
	}
	if o.Mode == configurationv1alpha1.AdoptModeMatch {
		if fields := differences(p.desired, actual.Body, r.Kind.DriftKeys()); len(fields) > 0 {
			return konnectapi.Entity{}, &failure{konnectv1alpha1.ReasonAdoptionMismatch, "adopt",
				&mismatch{kind: string(r.Kind.Type()), id: id, fields: fields}}
		}
	}
	e, err := p.api.Update(ctx, r.Kind.Type(), p.refs.ControlPlaneID, id, p.desired)
	if err != nil {
		return konnectapi.Entity{}, &failure{konnectv1alpha1.ReasonAdoptionFailed, "adopt", err}
	}
	ctrl.LoggerFrom(ctx).Info("adopted an existing Konnect entity", "id", id, "mode", string(o.Mode), "kind", r.Kind.Name())
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Adopted", "Adopt", "Adopted %s %s from Konnect (mode %s)", r.Kind.Type(), id, o.Mode)
	return e, nil
}

// differences are the fields of desired (among keys; all of them when nil) whose value the entity actual does not
// have, its tags aside: those are the object's identity, which adoption adds.
func differences(desired, actual map[string]any, keys []string) []string {
	if keys == nil {
		for k := range desired {
			keys = append(keys, k)
		}
	}
	var out []string
	for _, k := range keys {
		if k != "tags" && bodydiff.Drifted(desired, actual, []string{k}) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
