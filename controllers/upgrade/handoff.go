package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/ownership"
)

// handoff runs the domain-specific hand-over of a Succeeded version that takes part in its upgrade (spec.handoff)
// before ownership moves, and says whether adoption may go ahead. It records in st what ov is to take over (the
// version it replaces and the objects that version owns) and waits for the operator's answer in status.handoff; a
// failure or no answer by the deadline fails ov (terminal: a later version may replace it), and the old versions
// keep owning everything. It returns when to look again while it waits.
func (r *Reconciler) handoff(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, olds []*operatorsv1alpha1.OperatorVersion,
	st *operatorsv1alpha1.OperatorVersionStatus) (bool, time.Duration, error) {
	if ov.Spec.Handoff == nil {
		return true, 0, nil
	}
	for _, old := range olds {
		if old.Status.ReplacedBy == ov.Name {
			return true, 0, nil // adoption is under way: the hand-over was completed before
		}
	}
	now := time.Now()
	h := st.Handoff
	if h == nil || h.From != olds[0].Name {
		var objects []string
		for _, old := range olds {
			owned, err := ownership.Owned(ctx, r.objects(), r.RESTMapper(), old)
			if err != nil {
				return false, 0, err
			}
			for _, o := range owned {
				objects = append(objects, o.Kind+" "+qualified(o.Namespace, o.Name))
			}
		}
		st.Handoff = &operatorsv1alpha1.HandoffStatus{From: olds[0].Name, Objects: objects, RequestedAt: metav1.NewTime(now)}
		msg := fmt.Sprintf("waiting for the operator of %s to take over %d objects from %s and set status.handoff.completed "+
			"(or status.handoff.failed), within %s", ov.Name, len(objects), olds[0].Name, ov.Spec.Handoff.Timeout.Duration)
		setHandoff(st, ov, metav1.ConditionFalse, operatorsv1alpha1.ReasonHandoffRequested, msg)
		r.Recorder.Eventf(ov, olds[0], corev1.EventTypeNormal, operatorsv1alpha1.ReasonHandoffRequested, "Upgrade", "%s", msg)
		return false, ov.Spec.Handoff.Timeout.Duration, nil
	}
	switch deadline := h.RequestedAt.Add(ov.Spec.Handoff.Timeout.Duration); {
	case h.Completed:
		setHandoff(st, ov, metav1.ConditionTrue, operatorsv1alpha1.ReasonHandoffCompleted,
			fmt.Sprintf("the operator of %s took over from %s; ownership moves to it", ov.Name, h.From))
		return true, 0, nil
	case h.Failed != "":
		r.fail(st, ov, operatorsv1alpha1.ReasonHandoffFailed, fmt.Sprintf("the operator of %s could not take over from %s: %s; "+
			"%s keeps owning and running everything", ov.Name, h.From, h.Failed, h.From))
		return false, 0, nil
	case now.After(deadline):
		r.fail(st, ov, operatorsv1alpha1.ReasonHandoffTimedOut, fmt.Sprintf("the operator of %s did not report the hand-over from %s "+
			"within %s (status.handoff.completed); %s keeps owning and running everything", ov.Name, h.From, ov.Spec.Handoff.Timeout.Duration, h.From))
		return false, 0, nil
	default:
		return false, time.Until(deadline), nil
	}
}

// fail fails ov for a hand-over that did not happen.
func (r *Reconciler) fail(st *operatorsv1alpha1.OperatorVersionStatus, ov *operatorsv1alpha1.OperatorVersion, reason, msg string) {
	st.Phase, st.Reason, st.Message = operatorsv1alpha1.PhaseFailed, reason, msg
	setHandoff(st, ov, metav1.ConditionFalse, reason, msg)
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: operatorsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: ov.Generation})
	r.Recorder.Eventf(ov, nil, corev1.EventTypeWarning, reason, "Upgrade", "%s", msg)
}

func setHandoff(st *operatorsv1alpha1.OperatorVersionStatus, ov *operatorsv1alpha1.OperatorVersion, s metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: operatorsv1alpha1.ConditionHandoff, Status: s, Reason: reason,
		Message: msg, ObservedGeneration: ov.Generation})
}

func qualified(namespace, name string) string {
	return strings.TrimPrefix(namespace+"/"+name, "/")
}
