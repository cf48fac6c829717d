package entity

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// The conditions the loop sets: one per checked reference, and Programmed.

// applyChecks sets one condition per checked reference and returns the first failed check. Conditions of
// references after a failed one are removed: they were not checked.
func (r *Reconciler[T]) applyChecks(obj T, checks []RefCheck) *RefCheck {
	conds := r.Kind.Conditions(obj)
	var failed *RefCheck
	for i, c := range checks {
		if failed != nil || c.Absent {
			apimeta.RemoveStatusCondition(conds, c.Type)
			continue
		}
		status, reason := metav1.ConditionTrue, konnectv1alpha1.ReasonValid
		if !c.OK {
			status, reason = metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference
			if !c.Advisory {
				failed = &checks[i]
			}
		}
		if c.Reason != "" {
			reason = c.Reason
		}
		apimeta.SetStatusCondition(conds, metav1.Condition{Type: c.Type, Status: status, Reason: reason, Message: c.Message, ObservedGeneration: obj.GetGeneration()})
	}
	return failed
}

func (r *Reconciler[T]) setProgrammed(obj T, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(r.Kind.Conditions(obj), metav1.Condition{
		Type: konnectv1alpha1.ConditionProgrammed, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration(),
	})
}

// blockedParts reports parts that could not be synced: the entity is in Konnect, but not as declared.
func (r *Reconciler[T]) blockedParts(obj T, checks []RefCheck) {
	if failed := blocking(checks); failed != nil {
		r.setProgrammed(obj, false, konnectv1alpha1.ReasonInvalidReference, failed.Message)
	}
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

// allOK says whether every check passed; an Absent one (nothing to check) passes.
func allOK(checks []RefCheck) bool {
	for _, c := range checks {
		if !c.OK && !c.Absent {
			return false
		}
	}
	return true
}
