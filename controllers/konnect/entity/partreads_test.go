package entity

import (
	"slices"
	"testing"
	"time"
)

func TestGrantParts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name   string
		cands  []partCandidate
		budget int
		want   []int
	}{
		{"fewer than the budget: all", []partCandidate{{last: at(2)}, {last: at(1)}}, 5, []int{1, 0}},
		{"the ones synced longest ago first", []partCandidate{{last: at(3)}, {last: at(1)}, {last: at(4)}, {last: at(2)}}, 2, []int{1, 3}},
		{"never synced goes first", []partCandidate{{last: at(1)}, {}, {last: at(2)}}, 1, []int{1}},
		{"a grant not taken yet counts and is enqueued again", []partCandidate{{last: at(1), granted: true}, {last: at(2)}, {last: at(3)}}, 2, []int{0, 1}},
		{"grants not taken use the whole budget", []partCandidate{{last: at(3), granted: true}, {last: at(1)}, {last: at(2), granted: true}}, 2, []int{2, 0}},
		{"after a restart everything is due: still the budget", []partCandidate{{}, {}, {}, {}, {}, {}, {}}, 3, []int{0, 1, 2}},
		{"no budget: all", []partCandidate{{last: at(2)}, {last: at(1)}, {last: at(3)}}, 0, []int{1, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := grantParts(tc.cands, tc.budget); !slices.Equal(got, tc.want) {
				t.Errorf("grantParts = %v, want %v", got, tc.want)
			}
		})
	}
}

// Round robin: with n candidates and a budget of b, every candidate is granted within ceil(n/b) periods, each period
// granting at most b.
func TestGrantPartsRoundRobin(t *testing.T) {
	const n, b = 11, 3
	cands := make([]partCandidate, n)
	for i := range cands {
		cands[i].last = time.Unix(int64(n-i), 0) // arbitrary start order
	}
	seen := map[int]bool{}
	periods := (n + b - 1) / b
	for p := range periods {
		got := grantParts(cands, b)
		if len(got) > b {
			t.Fatalf("period %d: %d grants, budget %d", p, len(got), b)
		}
		for _, i := range got {
			seen[i] = true
			cands[i].last = time.Unix(int64(100+p), 0) // synced this period
		}
	}
	if len(seen) != n {
		t.Errorf("%d of %d candidates granted within %d periods", len(seen), n, periods)
	}
}
