package konnect

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Kong/sdk-konnect-go/models/operations"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	"github.com/almproject/alm/test/konnectsim"
)

// memberReads records, per control plane, the simulator's answers about consumer groups in the order they came: the
// drift scan's list of groups ("scan") and the reads of one group's members (the group's ID).
type memberReads struct {
	mu     sync.Mutex
	events map[string][]string
}

// logf is the simulator's request log (konnectsim.Options.Logf): "konnectsim: GET /v2/control-planes/{cp}/...".
func (m *memberReads) logf(format string, args ...any) {
	method, uri, _ := strings.Cut(strings.TrimPrefix(fmt.Sprintf(format, args...), "konnectsim: "), " ")
	path, _, _ := strings.Cut(uri, "?")
	rest, ok := strings.CutPrefix(path, konnectsim.PathControlPlanes+"/")
	if method != http.MethodGet || !ok {
		return
	}
	cp, rest, _ := strings.Cut(rest, "/")
	event := ""
	switch group, isGroup := strings.CutPrefix(rest, "core-entities/consumer_groups/"); {
	case rest == "core-entities/consumer_groups":
		event = "scan"
	case isGroup && strings.HasSuffix(group, "/consumers"):
		event = strings.TrimSuffix(group, "/consumers")
	default:
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string][]string{}
	}
	m.events[cp] = append(m.events[cp], event)
}

// periods returns, for control plane cp, the groups whose members were read after each scan from the from-th scan
// on, one list per scan: the reads of that sync period.
func (m *memberReads) periods(cp string, from int) [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]string
	scans := 0
	for _, ev := range m.events[cp] {
		if ev == "scan" {
			scans++
			if scans >= from {
				out = append(out, []string{})
			}
			continue
		}
		if scans >= from {
			out[len(out)-1] = append(out[len(out)-1], ev)
		}
	}
	return out
}

// mark is how many events control plane cp has had so far.
func (m *memberReads) mark(cp string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events[cp])
}

// since returns control plane cp's events from the mark-th on.
func (m *memberReads) since(cp string, mark int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.events[cp][mark:])
}

// scans is how many drift scans listed the groups of control plane cp.
func (m *memberReads) scans(cp string) int { return len(m.periods(cp, 1)) }

// partReadsEnv is two control planes with groups consumer groups each, every group with one member, under a
// budget of partReads member reads per control plane and sync period, all Programmed and settled.
type partReadsEnv struct {
	*env
	reads *memberReads
	cps   map[string]string // name -> Konnect ID
}

func newPartReadsEnv(t *testing.T, period time.Duration, groups, partReads int) *partReadsEnv {
	reads := &memberReads{}
	e := newEnv(t, envOptions{syncPeriod: period, partReads: partReads, sim: konnectsim.Options{Logf: reads.logf}})
	pe := &partReadsEnv{env: e, reads: reads, cps: map[string]string{}}
	for _, cp := range []string{"cp-a", "cp-b"} {
		pe.cps[cp] = e.readyControlPlane(cp).Status.ID
		var names []string
		for i := range groups {
			names = append(names, fmt.Sprintf("%s-group-%d", cp, i))
			e.create(consumerGroupObj(names[i], cp))
		}
		e.create(consumerObj(cp+"-alice", cp, names...))
	}
	for _, cp := range []string{"cp-a", "cp-b"} {
		for i := range groups {
			e.waitProgrammed(&configurationv1beta1.KongConsumerGroup{}, fmt.Sprintf("%s-group-%d", cp, i))
		}
		e.waitProgrammed(&configurationv1.KongConsumer{}, cp+"-alice")
	}
	return pe
}

// waitScans waits until every control plane's groups were scanned n more times than now, and returns the scan
// counts of now.
func (pe *partReadsEnv) waitScans(n int, period time.Duration) map[string]int {
	start := map[string]int{}
	for cp, id := range pe.cps {
		start[cp] = pe.reads.scans(id)
	}
	pe.eventually(time.Duration(n+2)*period, fmt.Sprintf("%d scans", n), func() error {
		for cp, id := range pe.cps {
			if got := pe.reads.scans(id) - start[cp]; got < n {
				return fmt.Errorf("%s: %d scans", cp, got)
			}
		}
		return nil
	})
	return start
}

// With many consumer groups, the periodic member reads stay within the budget per control plane and sync period,
// and take turns: every group's members are read within ceil(groups/budget) periods.
func TestPartReadsBudget(t *testing.T) {
	const period, groups, budget = 2 * time.Second, 7, 2
	const bound = (groups + budget - 1) / budget // 4 periods
	pe := newPartReadsEnv(t, period, groups, budget)
	pe.waitScans(2, period) // the creates' own part syncs are over
	start := pe.waitScans(bound+1, period)
	for cp, id := range pe.cps {
		periods := pe.reads.periods(id, start[cp]+1)
		periods = periods[:len(periods)-1] // the last one may still be going on
		read := map[string]bool{}
		for i, p := range periods {
			t.Logf("%s period %d: member reads of %d groups %v", cp, i, len(p), p)
			if len(p) > budget {
				t.Errorf("%s: %d member reads in one sync period, budget %d", cp, len(p), budget)
			}
			if i < bound {
				for _, g := range p {
					read[g] = true
				}
			}
		}
		if len(read) != groups {
			t.Errorf("%s: the members of %d of %d groups read within %d sync periods", cp, len(read), groups, bound)
		}
	}

	// After a restart every group is due, but the reads resume at the pace of the budget: none before the first
	// scan, at most the budget after each.
	pe.stopOperator()
	marks := map[string]int{}
	for cp, id := range pe.cps {
		marks[cp] = pe.reads.mark(id)
	}
	pe.startOperator()
	pe.waitScans(3, period)
	for cp, id := range pe.cps {
		reads := 0
		for _, ev := range pe.reads.since(id, marks[cp]) {
			if ev == "scan" {
				if reads > budget {
					t.Errorf("%s after the restart: %d member reads in one sync period, budget %d", cp, reads, budget)
				}
				reads = 0
				continue
			}
			reads++
		}
		if reads > budget {
			t.Errorf("%s after the restart: %d member reads in the last sync period, budget %d", cp, reads, budget)
		}
		t.Logf("%s after the restart: %v", cp, pe.reads.since(id, marks[cp]))
	}
}

// A membership removed in Konnect is restored by its group's turn of the part reads: within ceil(groups/budget)
// sync periods, with no write for the groups that did not drift.
func TestPartReadsRepairMembershipDrift(t *testing.T) {
	const period, groups, budget = 2 * time.Second, 7, 2
	const bound = (groups + budget - 1) / budget
	pe := newPartReadsEnv(t, period, groups, budget)
	pe.waitScans(2, period)
	kc := &configurationv1.KongConsumer{}
	if err := pe.get(kc, "cp-a-alice"); err != nil {
		t.Fatal(err)
	}
	ids := pe.groupIDs(fmt.Sprintf("cp-a-group-%d", groups-1), "cp-a-group-0")
	writes := count(pe.sim, http.MethodPost, konnectsim.PathConsumerConsumerGroups)
	if _, err := pe.sdk().ConsumerGroups.RemoveConsumerFromGroup(pe.ctx, operations.RemoveConsumerFromGroupRequest{
		ControlPlaneID: pe.cps["cp-a"], ConsumerGroupID: ids[0], ConsumerID: kc.Status.Konnect.ID}); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	pe.eventually(time.Duration(bound+1)*period+5*time.Second, "membership restored", func() error {
		if !slices.Contains(pe.sim.GroupConsumers(ids[0]), kc.Status.Konnect.ID) {
			return fmt.Errorf("group %s has %v", ids[0], pe.sim.GroupConsumers(ids[0]))
		}
		return nil
	})
	t.Logf("restored %s after the out-of-band removal (bound: %d sync periods of %s)", time.Since(removed).Round(100*time.Millisecond), bound, period)
	if !slices.Contains(pe.sim.GroupConsumers(ids[1]), kc.Status.Konnect.ID) {
		t.Errorf("cp-a-alice left cp-a-group-0")
	}
	if n := count(pe.sim, http.MethodPost, konnectsim.PathConsumerConsumerGroups) - writes; n != 1 {
		t.Errorf("%d memberships added, want 1 (only the removed one)", n)
	}
}
