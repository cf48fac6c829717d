package slim

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// maxLabelSets bounds how many label sets the table keeps: a few for each install under way, few enough that the
// sets of objects long gone (kept until the table is cleared) cost little.
const maxLabelSets = 4096

// labelSets keeps one map of each set of labels that cached objects carry, by its content.
var labelSets = struct {
	sync.Mutex
	m map[string]map[string]string
}{m: map[string]map[string]string{}}

// labelSet returns the table's map of the labels l, with its keys and values interned, making one if there is none.
// Cached objects are never changed in place (readers get copies), so objects may share their labels' map.
func labelSet(l map[string]string) map[string]string {
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		key.WriteString(k)
		key.WriteByte(0)
		key.WriteString(l[k])
		key.WriteByte(0)
	}
	labelSets.Lock()
	defer labelSets.Unlock()
	if set, ok := labelSets.m[key.String()]; ok {
		return set
	}
	set := make(map[string]string, len(l))
	for k, v := range l {
		set[intern(k)] = intern(v)
	}
	if len(labelSets.m) >= maxLabelSets {
		clear(labelSets.m)
	}
	labelSets.m[key.String()] = set
	return set
}
