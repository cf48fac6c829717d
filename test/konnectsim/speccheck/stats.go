package speccheck

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// loadTime is Spec.LoadTime of the process's document, 0 until it is loaded.
var loadTime atomic.Int64

// What this process checked, over every simulator it ran: the coverage tests read it after the tests ran.
var stats = struct {
	sync.Mutex
	ops map[Operation]*OperationStats
}{ops: map[Operation]*OperationStats{}}

// OperationStats counts the checked exchanges of one operation.
type OperationStats struct {
	Operation
	// Checked is the number of exchanges checked; Succeeded those answered 2xx with no violation (the request and
	// the success answer's schema both checked).
	Checked, Succeeded int
}

// Summary is what this process checked so far.
type Summary struct {
	// LoadTime is how long loading the document took (0 when it was never loaded).
	LoadTime time.Duration
	// Checked is the number of exchanges checked.
	Checked int
	// Operations are the operations called, sorted by operationId.
	Operations []OperationStats
}

func record(op Operation, succeeded bool) {
	stats.Lock()
	defer stats.Unlock()
	s := stats.ops[op]
	if s == nil {
		s = &OperationStats{Operation: op}
		stats.ops[op] = s
	}
	s.Checked++
	if succeeded {
		s.Succeeded++
	}
}

// Stats returns what this process checked so far.
func Stats() Summary {
	sum := Summary{LoadTime: time.Duration(loadTime.Load())}
	stats.Lock()
	defer stats.Unlock()
	for _, s := range stats.ops {
		sum.Checked += s.Checked
		sum.Operations = append(sum.Operations, *s)
	}
	sort.Slice(sum.Operations, func(i, j int) bool { return sum.Operations[i].ID < sum.Operations[j].ID })
	return sum
}
