package waves

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/internal/versions"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/controllers/upgradetrigger"
	"github.com/almproject/alm/internal/status"
)

// Event reasons.
const (
	EventWaveStarted      = "WaveStarted"
	EventWaveCompleted    = "WaveCompleted"
	EventRolloutHalted    = "RolloutHalted"
	EventRolloutCompleted = "RolloutCompleted"
)

// upgrade creates m's next OperatorVersion on the way to its rollout's version, annotated with the rollout, as the
// upgradetrigger loop does for packages without a policy.
func (r *Reconciler) upgrade(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, m *member, st *operatorsv1alpha1.RolloutStatus) error {
	if m == nil || m.res.Chosen == nil {
		return nil
	}
	next, err := upgradetrigger.NextHop(r.Registry.Index(), m.res, m.at.Namespace)
	if err != nil {
		return err
	}
	for _, existing := range m.all {
		if existing.Name == next.Name {
			return nil
		}
	}
	next.Spec.Source = registry.Reference(m.res.Chosen.Catalog)
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[operatorsv1alpha1.AnnotationRolloutTarget] = m.res.Chosen.Name
	next.Annotations[operatorsv1alpha1.AnnotationRolloutVersion] = m.res.Chosen.Version.String()
	at := m.at.DeepCopy() // versions.Create reads it; the cached object is not ours to change
	if err := versions.Create(ctx, r.Client, at, next, r.VersionFinalizers); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Upgrading", "appType", klog.KObj(at), "to", next.Name, "wave", st.Wave)
	r.Recorder.Eventf(at, next, corev1.EventTypeNormal, "Upgrading", "Upgrade", "Upgrading to %s %s: wave %d of %d of the rollout of CatalogSource %s/%s",
		next.Name, next.Spec.Version, st.Wave, st.Waves, cs.Namespace, cs.Name)
	return nil
}

// announce records an Event on cs for each change between the rollout's previous status and st: a wave started or
// finished, a halt, the end. The status holds the wave, so a restarted ALM does not announce anything twice.
func (r *Reconciler) announce(cs *operatorsv1alpha1.CatalogSource, prev, st *operatorsv1alpha1.RolloutStatus) {
	what := fmt.Sprintf("%s %s", st.Package, st.Version)
	prevWave, prevPhase := int32(0), operatorsv1alpha1.RolloutPhase("")
	if prev != nil {
		prevWave, prevPhase = prev.Wave, prev.Phase
	}
	switch st.Phase {
	case operatorsv1alpha1.RolloutHalted:
		if prevPhase != operatorsv1alpha1.RolloutHalted && st.Halt != nil {
			r.Recorder.Eventf(cs, nil, corev1.EventTypeWarning, EventRolloutHalted, "Rollout",
				"Rollout of %s halted in wave %d of %d: install %s failed: %s: %s", what, st.Wave, st.Waves, st.Halt.Install, st.Halt.Reason, truncate(st.Halt.Message, 600))
		}
		return
	case operatorsv1alpha1.RolloutComplete:
		if prev != nil && prevPhase != operatorsv1alpha1.RolloutComplete {
			r.Recorder.Eventf(cs, nil, corev1.EventTypeNormal, EventWaveCompleted, "Rollout", "Wave %d of %d of %s completed", prevWave, st.Waves, what)
			r.Recorder.Eventf(cs, nil, corev1.EventTypeNormal, EventRolloutCompleted, "Rollout",
				"Rollout of %s completed: %d installs upgraded, %d held for approval", what, st.Upgraded, st.Held)
		}
		return
	}
	if st.Wave <= prevWave {
		return
	}
	if prevWave > 0 {
		r.Recorder.Eventf(cs, nil, corev1.EventTypeNormal, EventWaveCompleted, "Rollout", "Wave %d of %d of %s completed", prevWave, st.Waves, what)
	}
	r.Recorder.Eventf(cs, nil, corev1.EventTypeNormal, EventWaveStarted, "Rollout", "Wave %d of %d of %s started (%d of %d installs upgraded so far)",
		st.Wave, st.Waves, what, st.Upgraded, st.Installs)
}

// markAppTypes sets the RolloutHalted condition on the AppTypes whose rollout (byBundle) is halted, and removes it
// from the others; only AppTypes whose condition changes are written.
func (r *Reconciler) markAppTypes(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, members []*member,
	byBundle map[string]*operatorsv1alpha1.RolloutStatus) error {
	var errs []error
	for _, m := range members {
		st := byBundle[m.target.Bundle]
		cur := apimeta.FindStatusCondition(m.at.Status.Conditions, operatorsv1alpha1.ConditionRolloutHalted)
		halted := st != nil && st.Phase == operatorsv1alpha1.RolloutHalted && st.Halt != nil
		if !halted && cur == nil {
			continue
		}
		orig := m.at.DeepCopy()
		at := m.at.DeepCopy()
		if halted {
			apimeta.SetStatusCondition(&at.Status.Conditions, metav1.Condition{Type: operatorsv1alpha1.ConditionRolloutHalted,
				Status: metav1.ConditionTrue, Reason: operatorsv1alpha1.ReasonInstallFailed, ObservedGeneration: at.Generation,
				Message: HaltMessage(cs, st, m.install)})
		} else {
			apimeta.RemoveStatusCondition(&at.Status.Conditions, operatorsv1alpha1.ConditionRolloutHalted)
		}
		errs = append(errs, status.Patch(ctx, r, orig, at))
	}
	return errors.Join(errs...)
}

// HaltMessage is the RolloutHalted condition's message for install in the halted rollout st of cs.
func HaltMessage(cs *operatorsv1alpha1.CatalogSource, st *operatorsv1alpha1.RolloutStatus, install Install) string {
	where := "it stays on its version until a newer version is published"
	switch install.State {
	case Upgraded:
		where = "it runs " + st.Version + " already"
	case Failed:
		where = "it is the install that failed"
	case Upgrading:
		where = "its upgrade had started and goes on"
	}
	return truncate(fmt.Sprintf("rollout of %s %s (CatalogSource %s/%s) halted in wave %d of %d: install %s failed: %s: %s; %s",
		st.Package, st.Version, cs.Namespace, cs.Name, st.Wave, st.Waves, st.Halt.Install, st.Halt.Reason, st.Halt.Message, where), 4000)
}

// canarySelector is the policy's canary selector, nil when it has none.
func canarySelector(p *operatorsv1alpha1.RolloutPolicy) (labels.Selector, error) {
	if p == nil || p.Canary == nil || p.Canary.Selector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(p.Canary.Selector)
	if err != nil {
		return nil, fmt.Errorf("spec.rollout.canary.selector: %w", err)
	}
	return sel, nil
}

func labelSet(l map[string]string) labels.Set { return labels.Set(l) }

// installedOf is the installed version among all (versions.Installed).
func installedOf(all []operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	return versions.Installed(all)
}

func joinErrors(errs []error) error { return errors.Join(errs...) }
