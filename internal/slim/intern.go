package slim

import (
	"unsafe"

	"github.com/almproject/alm/internal/weakstring"
)

// shared keeps one copy of each string that cached objects hold, weakly: a copy that no object holds any more is
// collected and forgotten (names and UIDs of objects long gone do not pile up). unique.Make does not do here: its
// canonical copy is forgotten as soon as no Handle is held, and the cache holds strings, not Handles.
var shared = weakstring.New[struct{}]()

// intern returns the table's copy of s, making one if there is none. Two callers that intern the same new string at
// once may each keep a copy of their own; the table keeps the later.
func intern(s string) string {
	if s == "" {
		return s
	}
	if copied, _, ok := shared.Get(s); ok {
		return copied
	}
	// At least 16 bytes: smaller objects may share a block with others (Go's tiny allocator) and be kept longer.
	b := make([]byte, len(s), max(len(s), 16))
	copy(b, s)
	copied := unsafe.String(&b[0], len(s))
	shared.Put(copied, struct{}{})
	return copied
}
