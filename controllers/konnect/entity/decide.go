package entity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DriftMode is how out-of-band changes in Konnect are found and overwritten once the sync period has passed.
type DriftMode string

const (
	// DriftModeList lists each control plane's entities once per sync period (a few paginated calls) and updates
	// only the entities that differ from their objects.
	DriftModeList DriftMode = "list"
	// DriftModeUpdate calls Konnect's update for every object once per sync period, as the seed's flowchart does
	// literally (one call per object per period).
	DriftModeUpdate DriftMode = "update"
)

// Action is what a reconcile does with Konnect.
type Action int

const (
	// ActionWait: Konnect is in the declared state; come back when the sync period has passed.
	ActionWait Action = iota
	// ActionCreate: the entity does not exist yet.
	ActionCreate
	// ActionUpdate: the object changed, Konnect drifted, or (DriftModeUpdate) the sync period passed.
	ActionUpdate
)

func (a Action) String() string {
	return [...]string{"wait", "create", "update"}[a]
}

// Facts are what the decision depends on.
type Facts struct {
	// HasID: the object's status holds the Konnect ID.
	HasID bool
	// Changed: the spec, labels, annotations or parent IDs differ from what was last written (observedHash).
	Changed bool
	// Drifted: the last list of the control plane showed the entity missing or different.
	Drifted bool
	// SyncDue: the sync period has passed since the last write.
	SyncDue bool
	Mode    DriftMode
}

// Decide is the seed's flowchart for an object whose references are valid: not created -> create; changed ->
// update now; unchanged -> wait for the sync period, then update (literally, or only if drift was seen).
func Decide(f Facts) Action {
	switch {
	case !f.HasID:
		return ActionCreate
	case f.Changed, f.Drifted:
		return ActionUpdate
	case f.SyncDue && f.Mode == DriftModeUpdate:
		return ActionUpdate
	default:
		return ActionWait
	}
}

// syncDue says whether the sync period has passed since last, and if not how long remains.
func syncDue(last *time.Time, now time.Time, period time.Duration) (bool, time.Duration) {
	if last == nil {
		return true, period
	}
	remaining := last.Add(period).Sub(now)
	if remaining <= 0 {
		return true, period
	}
	return false, remaining
}

// StateHash is the fingerprint of what an object declares: the Konnect body (with parent IDs), the control plane,
// the entity's parts (nil for most kinds) and the object's labels and annotations (whose edits count as changes,
// unlike in Kong's operator).
func StateHash(obj client.Object, cpID string, body map[string]any, parts any) string {
	data, _ := json.Marshal(struct {
		Body        map[string]any    `json:"b"`
		CP          string            `json:"c"`
		Labels      map[string]string `json:"l"`
		Annotations map[string]string `json:"a"`
		Parts       any               `json:"p,omitempty"`
	}{body, cpID, obj.GetLabels(), obj.GetAnnotations(), parts})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// Drifted says whether the entity Konnect holds differs from the desired body on the compared keys (every key of
// desired when keys is nil). Konnect fills defaults for fields the object leaves out; those are not drift. Tags
// compare as sets; labels compare exactly, except keys only Konnect may set (kong*, konnect*, mesh*, kic*, _*), so a
// label added or removed out of band is drift too. Identity tags and labels of another tag scheme (a "k8s-" key
// desired has not) are not drift: see keepForeignIdentity.
func Drifted(desired, actual map[string]any, keys []string) bool {
	if keys == nil {
		for k := range desired {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		want, ok := desired[k]
		if !ok {
			continue
		}
		got := actual[k]
		switch k {
		case "tags":
			if !sameSet(want, withoutForeign(want, got)) {
				return true
			}
		case "labels":
			if !sameLabels(got, want) {
				return true
			}
		case "config":
			// A plugin's configuration comes back with the plugin's defaults filled in.
			if !contains(normalize(got), normalize(want)) {
				return true
			}
		default:
			if !jsonEqual(want, got) {
				return true
			}
		}
	}
	return false
}

// contains says whether got holds want: every key of an object in want is in got with a value that holds want's;
// anything else compares equal.
func contains(got, want any) bool {
	w, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(got, want)
	}
	g, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range w {
		gv, present := g[k]
		if !present || !contains(gv, v) {
			return false
		}
	}
	return true
}

// jsonEqual compares two values after a JSON round trip, so that numbers, typed slices and maps compare alike.
func jsonEqual(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

func sameSet(a, b any) bool {
	as, bs := stringList(a), stringList(b)
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(slices.Compact(as), slices.Compact(bs))
}

// withoutForeign returns the actual tags without the identity tags of another scheme than desired's.
func withoutForeign(desired, actual any) []string {
	foreign := foreignTags(stringList(desired), stringList(actual))
	var out []string
	for _, t := range stringList(actual) {
		if !slices.Contains(foreign, t) {
			out = append(out, t)
		}
	}
	return out
}

func stringList(v any) []string {
	var out []string
	if list, ok := normalize(v).([]any); ok {
		for _, item := range list {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func sameLabels(actual, desired any) bool {
	got, _ := normalize(actual).(map[string]any)
	want, _ := normalize(desired).(map[string]any)
	for k, v := range got {
		if !konnectLabel(k) && !foreignLabel(k, want) && want[k] != v {
			return false
		}
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// konnectLabel says whether a label key is one users cannot set (Konnect reserves these prefixes).
func konnectLabel(key string) bool {
	for _, p := range []string{"kong", "konnect", "mesh", "kic", "_", "insomnia"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
