package rollback

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// maxRolledBack bounds status.rolledBack (the API's MaxItems); the oldest entries go first.
const maxRolledBack = 16

// Record fills the status this loop owns from what is installed: when the installed version is a rollback
// (spec.rollbackFrom), the condition RolledBack names the version rolled back from and why, and an automatic
// rollback's version is listed in status.rolledBack, so that it is not offered again. refused says why a rollback
// or downgrade was refused ("" for none). A refusal that no longer applies is cleared.
func Record(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, installed *operatorsv1alpha1.OperatorVersion, refused string) {
	if refused != "" {
		setCondition(st, at, metav1.ConditionFalse, operatorsv1alpha1.ReasonRollbackRefused, refused)
		return
	}
	if installed == nil || installed.Spec.RollbackFrom == nil {
		if c := apimeta.FindStatusCondition(st.Conditions, operatorsv1alpha1.ConditionRolledBack); c != nil && c.Status == metav1.ConditionFalse {
			apimeta.RemoveStatusCondition(&st.Conditions, operatorsv1alpha1.ConditionRolledBack)
		}
		return
	}
	from := installed.Spec.RollbackFrom
	reason := operatorsv1alpha1.ReasonDowngraded
	if from.Automatic {
		reason = operatorsv1alpha1.ReasonAutomaticRollback
		addRolledBack(st, operatorsv1alpha1.RolledBackVersion{Name: from.Name, Version: from.Version, RolledBackTo: installed.Name,
			Reason: from.Reason, Time: installed.CreationTimestamp})
	}
	switch installed.Status.Phase {
	case operatorsv1alpha1.PhaseSucceeded:
		setCondition(st, at, metav1.ConditionTrue, reason, from.Reason+"; rolled back to "+installed.Name)
	case operatorsv1alpha1.PhaseFailed:
		setCondition(st, at, metav1.ConditionFalse, operatorsv1alpha1.ReasonRollbackFailed, from.Reason+"; rolling back to "+
			installed.Name+" failed ("+installed.Status.Reason+": "+installed.Status.Message+"); "+from.Name+" keeps running")
	default:
		setCondition(st, at, metav1.ConditionUnknown, reason, from.Reason+"; rolling back to "+installed.Name)
	}
}

// addRolledBack lists rb in st.RolledBack unless its version is listed already.
func addRolledBack(st *operatorsv1alpha1.AppTypeStatus, rb operatorsv1alpha1.RolledBackVersion) {
	for _, existing := range st.RolledBack {
		if existing.Name == rb.Name {
			return
		}
	}
	st.RolledBack = append(st.RolledBack, rb)
	if n := len(st.RolledBack); n > maxRolledBack {
		st.RolledBack = st.RolledBack[n-maxRolledBack:]
	}
}

func setCondition(st *operatorsv1alpha1.AppTypeStatus, at *operatorsv1alpha1.AppType, s metav1.ConditionStatus, reason, msg string) {
	if len(msg) > 32768 {
		msg = msg[:32768]
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: operatorsv1alpha1.ConditionRolledBack, Status: s,
		Reason: reason, Message: msg, ObservedGeneration: at.Generation})
}
