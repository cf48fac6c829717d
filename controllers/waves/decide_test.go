package waves

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// policy is canary 1, waves [25%], soak 1m, as the integration tests use it.
func policy(mutate ...func(*operatorsv1alpha1.RolloutPolicy)) *operatorsv1alpha1.RolloutPolicy {
	p := &operatorsv1alpha1.RolloutPolicy{Canary: &operatorsv1alpha1.RolloutCanary{Count: ptr.To[int32](1)},
		Waves: []intstr.IntOrString{intstr.FromString("25%")}, Soak: &metav1.Duration{Duration: time.Minute}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestBoundaries(t *testing.T) {
	cases := []struct {
		name     string
		p        *operatorsv1alpha1.RolloutPolicy
		n, canar int
		want     []int
	}{
		{"1 / 25% / rest of 20", policy(), 20, 0, []int{1, 5, 20}},
		{"no canary, no waves: one wave", &operatorsv1alpha1.RolloutPolicy{}, 20, 0, []int{20}},
		{"canary percent rounds up", policy(func(p *operatorsv1alpha1.RolloutPolicy) {
			p.Canary = &operatorsv1alpha1.RolloutCanary{Percent: ptr.To[int32](10)}
		}), 15, 0, []int{2, 4, 15}},
		{"canary selector matching 3", policy(func(p *operatorsv1alpha1.RolloutPolicy) {
			p.Canary = &operatorsv1alpha1.RolloutCanary{Selector: &metav1.LabelSelector{}}
		}), 20, 3, []int{3, 5, 20}},
		{"canary selector matching none starts with waves[0]", policy(func(p *operatorsv1alpha1.RolloutPolicy) {
			p.Canary = &operatorsv1alpha1.RolloutCanary{Selector: &metav1.LabelSelector{}}
		}), 20, 0, []int{5, 20}},
		{"counts, a wave that does not grow and a bad value are dropped", policy(func(p *operatorsv1alpha1.RolloutPolicy) {
			p.Waves = []intstr.IntOrString{intstr.FromInt32(3), intstr.FromInt32(2), intstr.FromString("x"), intstr.FromString("50%"), intstr.FromString("100%")}
		}), 20, 0, []int{1, 3, 10, 20}},
		{"fewer installs than the canary", policy(func(p *operatorsv1alpha1.RolloutPolicy) { p.Canary.Count = ptr.To[int32](5) }), 2, 0, []int{2}},
		{"no installs", policy(), 0, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Boundaries(tc.p, tc.n, tc.canar); !slices.Equal(got, tc.want) {
				t.Fatalf("Boundaries = %v, want %v", got, tc.want)
			}
		})
	}
}

// fleet is n installs ns-00/p ... in state Pending.
func fleet(n int) []Install {
	out := make([]Install, n)
	for i := range out {
		out[i] = Install{Key: types.NamespacedName{Namespace: fmt.Sprintf("ns-%02d", i), Name: "p"}}
	}
	return out
}

func upgraded(in []Install, at time.Time, idx ...int) {
	for _, i := range idx {
		in[i].State, in[i].DoneAt = Upgraded, at
	}
}

func keys(idx ...int) []types.NamespacedName {
	var out []types.NamespacedName
	for _, i := range idx {
		out = append(out, types.NamespacedName{Namespace: fmt.Sprintf("ns-%02d", i), Name: "p"})
	}
	return out
}

func TestDecide(t *testing.T) {
	halted := &operatorsv1alpha1.RolloutStatus{Phase: operatorsv1alpha1.RolloutHalted, Wave: 1,
		Halt: &operatorsv1alpha1.RolloutHalt{Install: "ns-00/p", Reason: "ProgressDeadlineExceeded"}}
	cases := []struct {
		name    string
		p       *operatorsv1alpha1.RolloutPolicy
		setup   func([]Install)
		prev    *operatorsv1alpha1.RolloutStatus
		phase   operatorsv1alpha1.RolloutPhase
		wave    int32
		start   []types.NamespacedName
		requeue time.Duration
	}{
		{name: "a new version starts the canary", p: policy(), setup: func([]Install) {}, phase: operatorsv1alpha1.RolloutProgressing, wave: 1, start: keys(0)},
		{name: "the canary labelled last in name order goes first", p: policy(func(p *operatorsv1alpha1.RolloutPolicy) {
			p.Canary = &operatorsv1alpha1.RolloutCanary{Selector: &metav1.LabelSelector{}}
		}), setup: func(in []Install) { in[19].Canary = true }, phase: operatorsv1alpha1.RolloutProgressing, wave: 1, start: keys(19)},
		{name: "the canary upgrading: nothing else starts", p: policy(), setup: func(in []Install) { in[0].State = Upgrading },
			phase: operatorsv1alpha1.RolloutProgressing, wave: 1},
		{name: "the canary upgraded: it soaks", p: policy(), setup: func(in []Install) { upgraded(in, t0.Add(-10*time.Second), 0) },
			phase: operatorsv1alpha1.RolloutSoaking, wave: 1, requeue: 50 * time.Second},
		{name: "soaked: wave 2 starts 4 more", p: policy(), setup: func(in []Install) { upgraded(in, t0.Add(-2*time.Minute), 0) },
			phase: operatorsv1alpha1.RolloutProgressing, wave: 2, start: keys(1, 2, 3, 4)},
		{name: "maxConcurrent 2 counts those upgrading", p: policy(func(p *operatorsv1alpha1.RolloutPolicy) { p.MaxConcurrent = 2 }),
			setup: func(in []Install) { upgraded(in, t0.Add(-2*time.Minute), 0); in[1].State = Upgrading },
			phase: operatorsv1alpha1.RolloutProgressing, wave: 2, start: keys(2)},
		{name: "a held install does not hold its wave back", p: policy(),
			setup: func(in []Install) { upgraded(in, t0.Add(-2*time.Minute), 0, 1, 2, 3); in[4].State = Held },
			phase: operatorsv1alpha1.RolloutProgressing, wave: 3, start: keys(5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)},
		{name: "a failed canary halts: nothing starts", p: policy(), setup: func(in []Install) {
			in[0].State, in[0].Reason = Failed, "ProgressDeadlineExceeded"
		}, phase: operatorsv1alpha1.RolloutHalted, wave: 1},
		{name: "a failure in the soak of wave 2 halts", p: policy(), setup: func(in []Install) {
			upgraded(in, t0.Add(-5*time.Minute), 0)
			upgraded(in, t0, 1, 2, 3)
			in[4].State = Failed
		}, phase: operatorsv1alpha1.RolloutHalted, wave: 2},
		{name: "a halt is sticky although the failed install recovered", p: policy(), prev: halted,
			setup: func(in []Install) { upgraded(in, t0.Add(-2*time.Minute), 0) }, phase: operatorsv1alpha1.RolloutHalted, wave: 1},
		{name: "an install whose hop took over goes on", p: policy(), setup: func(in []Install) { in[0].State, in[0].Next = Upgrading, true },
			phase: operatorsv1alpha1.RolloutProgressing, wave: 1, start: keys(0)},
		{name: "all upgraded: complete, without a soak after the last wave", p: policy(),
			setup: func(in []Install) {
				upgraded(in, t0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
			},
			prev: &operatorsv1alpha1.RolloutStatus{Phase: operatorsv1alpha1.RolloutProgressing, Wave: 3}, phase: operatorsv1alpha1.RolloutComplete, wave: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := fleet(20)
			tc.setup(in)
			plan := Decide(tc.p, "p", "p.v2.0.0", "2.0.0", in, tc.prev, t0)
			st := plan.Status
			if st.Phase != tc.phase || st.Wave != tc.wave || !slices.Equal(plan.Start, tc.start) || plan.RequeueAfter != tc.requeue {
				t.Fatalf("phase %s wave %d start %v requeue %s; want %s wave %d start %v requeue %s",
					st.Phase, st.Wave, plan.Start, plan.RequeueAfter, tc.phase, tc.wave, tc.start, tc.requeue)
			}
			if st.Phase == operatorsv1alpha1.RolloutHalted && (st.Halt == nil || st.Halt.Install == "") {
				t.Errorf("halted without saying which install failed: %+v", st.Halt)
			}
		})
	}
}
