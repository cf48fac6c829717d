package waves

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// State is where one install stands in the rollout of one version.
type State int

const (
	// Pending: on an older version; it upgrades when its wave has started and a slot is free.
	Pending State = iota
	// Held: its AppType has approval: Manual and does not approve the version.
	Held
	// Upgrading: the rollout created its new version (or a hop towards it), not yet Succeeded and taken over.
	Upgrading
	// Upgraded: runs the version, Succeeded with its Deployments available, and took over.
	Upgraded
	// Failed: its new version failed, became unavailable, or was rolled back.
	Failed
)

// Install is one install (AppType) of a rollout and its state.
type Install struct {
	Key types.NamespacedName
	// Canary: its labels match spec.rollout.canary.selector.
	Canary bool
	State  State
	// Next: a hop towards the version succeeded; the next hop is to be created (it is Upgrading already).
	Next bool
	// DoneAt is when it took over (Upgraded).
	DoneAt time.Time
	// Reason and Message say why it failed (Failed).
	Reason, Message string
}

// Plan is what the loop does for one rollout: its status, which installs to upgrade now, and when to look again.
type Plan struct {
	Status operatorsv1alpha1.RolloutStatus
	// Start are the installs whose next version to create now, in wave order.
	Start []types.NamespacedName
	// RequeueAfter: the soak of the current wave ends then.
	RequeueAfter time.Duration
}

// Order puts the installs in wave order: those the canary selector matches first, then by namespace and name.
func Order(installs []Install) {
	sort.SliceStable(installs, func(i, j int) bool {
		a, b := installs[i], installs[j]
		if a.Canary != b.Canary {
			return a.Canary
		}
		if a.Key.Namespace != b.Key.Namespace {
			return a.Key.Namespace < b.Key.Namespace
		}
		return a.Key.Name < b.Key.Name
	})
}

// Boundaries are the waves of a rollout to n installs, as the number of installs upgraded once each wave is done
// (growing, the last is n); canaries is how many installs the canary selector matches.
func Boundaries(p *operatorsv1alpha1.RolloutPolicy, n, canaries int) []int {
	if n == 0 {
		return nil
	}
	var out []int
	add := func(end int) {
		end = min(end, n)
		if end > 0 && (len(out) == 0 || end > out[len(out)-1]) {
			out = append(out, end)
		}
	}
	if c := p.Canary; c != nil {
		switch {
		case c.Selector != nil:
			add(canaries)
		case c.Count != nil:
			add(int(*c.Count))
		case c.Percent != nil:
			add(max(1, ceilPercent(int(*c.Percent), n)))
		}
	}
	for _, w := range p.Waves {
		add(waveEnd(w, n))
	}
	add(n)
	return out
}

// waveEnd is a wave's value for n installs: a count, or a percentage rounded up; 0 when it is neither.
func waveEnd(w intstr.IntOrString, n int) int {
	if w.Type == intstr.Int {
		return max(0, w.IntValue())
	}
	s, ok := strings.CutSuffix(w.StrVal, "%")
	if !ok {
		return 0
	}
	var pct int
	if _, err := fmt.Sscanf(s, "%d", &pct); err != nil || pct <= 0 || pct > 100 {
		return 0
	}
	return ceilPercent(pct, n)
}

func ceilPercent(pct, n int) int { return (pct*n + 99) / 100 }

// Decide plans the rollout of one version to installs (in any order; Decide orders them) under policy p, from the
// rollout's previous status (nil: none). It is pure: the loop reads the cluster, calls it, and writes the result.
//
// A halt is sticky for the version: once an install failed, no other install is started for it, even if the
// failed one recovers; a newer version is a new rollout. Waves start in order: wave k+1 once every install of
// waves 1..k has upgraded (or is held for approval) and the last of wave k took over at least soak ago. Within the
// started waves, at most maxConcurrent installs are upgrading at once.
func Decide(p *operatorsv1alpha1.RolloutPolicy, pkg, bundle, version string, installs []Install, prev *operatorsv1alpha1.RolloutStatus,
	now time.Time) Plan {
	Order(installs)
	canaries := 0
	for _, in := range installs {
		if in.Canary {
			canaries++
		}
	}
	ends := Boundaries(p, len(installs), canaries)
	st := operatorsv1alpha1.RolloutStatus{Package: pkg, Version: version, Bundle: bundle, Waves: int32(len(ends)),
		Installs: int32(len(installs))}
	count(&st, installs)
	plan := Plan{}
	wave, soakUntil := currentWave(p, ends, installs, now)
	st.Wave = int32(wave + 1)
	switch {
	case prev != nil && prev.Phase == operatorsv1alpha1.RolloutHalted:
		st.Phase, st.Halt, st.Wave = operatorsv1alpha1.RolloutHalted, prev.Halt, prev.Wave
	case firstFailed(installs) != nil:
		f := firstFailed(installs)
		st.Phase = operatorsv1alpha1.RolloutHalted
		st.Halt = &operatorsv1alpha1.RolloutHalt{Install: f.Key.String(), Reason: f.Reason, Message: truncate(f.Message, 2000), Time: metav1.NewTime(now)}
		if prev != nil {
			st.Wave = prev.Wave // the wave that failed, not one its failure let look done
		}
	case prev != nil && prev.Phase == operatorsv1alpha1.RolloutComplete && st.Pending+st.Upgrading == 0:
		st.Phase, st.Wave = operatorsv1alpha1.RolloutComplete, prev.Wave
	case wave >= len(ends):
		st.Phase, st.Wave = operatorsv1alpha1.RolloutComplete, int32(len(ends))
	case !soakUntil.IsZero():
		st.Phase, st.SoakUntil = operatorsv1alpha1.RolloutSoaking, &metav1.Time{Time: soakUntil}
		plan.RequeueAfter = max(soakUntil.Sub(now), time.Second)
	default:
		st.Phase = operatorsv1alpha1.RolloutProgressing
		plan.Start = admit(p, installs, ends[wave])
	}
	st.LastTransitionTime = metav1.NewTime(now)
	if prev != nil && prev.Phase == st.Phase && prev.Wave == st.Wave {
		st.LastTransitionTime = prev.LastTransitionTime
	}
	plan.Status = st
	return plan
}

// currentWave is the index of the first wave not done; soakUntil is set when every install of it has upgraded
// and it soaks until then. A wave of which every install is held counts as done at once; when every install has
// upgraded or is held, the rollout is done.
func currentWave(p *operatorsv1alpha1.RolloutPolicy, ends []int, installs []Install, now time.Time) (int, time.Time) {
	soak := time.Duration(0)
	if p.Soak != nil {
		soak = p.Soak.Duration
	}
	if settledAll(installs) {
		return len(ends), time.Time{} // nothing left to protect by soaking
	}
	start := 0
	for wave, end := range ends {
		var last time.Time
		for _, in := range installs[start:end] {
			switch in.State {
			case Upgraded:
				if in.DoneAt.After(last) {
					last = in.DoneAt
				}
			case Held:
			default:
				return wave, time.Time{}
			}
		}
		if wave < len(ends)-1 && !last.IsZero() && now.Before(last.Add(soak)) {
			return wave, last.Add(soak)
		}
		start = end
	}
	return len(ends), time.Time{}
}

// settledAll says whether every install has upgraded or is held.
func settledAll(installs []Install) bool {
	for _, in := range installs {
		if in.State != Upgraded && in.State != Held {
			return false
		}
	}
	return true
}

// admit is which pending installs of the started waves (the first end installs) start now: in order, while fewer
// than maxConcurrent are upgrading. An install whose hop succeeded goes on at once: it holds its slot already.
func admit(p *operatorsv1alpha1.RolloutPolicy, installs []Install, end int) []types.NamespacedName {
	upgrading := 0
	var out []types.NamespacedName
	for _, in := range installs {
		if in.State == Upgrading {
			upgrading++
			if in.Next {
				out = append(out, in.Key)
			}
		}
	}
	for _, in := range installs[:end] {
		if in.State != Pending {
			continue
		}
		if p.MaxConcurrent > 0 && upgrading >= int(p.MaxConcurrent) {
			break
		}
		out = append(out, in.Key)
		upgrading++
	}
	return out
}

func count(st *operatorsv1alpha1.RolloutStatus, installs []Install) {
	for _, in := range installs {
		switch in.State {
		case Pending:
			st.Pending++
		case Held:
			st.Held++
		case Upgrading:
			st.Upgrading++
		case Upgraded:
			st.Upgraded++
		case Failed:
			st.Failed++
		}
	}
}

// firstFailed is the first failed install in wave order, nil when none failed.
func firstFailed(installs []Install) *Install {
	for i := range installs {
		if installs[i].State == Failed {
			return &installs[i]
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
