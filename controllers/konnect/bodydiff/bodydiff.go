// Package bodydiff compares the body an object declares with the entity Konnect holds: what counts as drift (Konnect's
// defaults, tags as sets, labels only Konnect may set, identity keys of another tag scheme do not), and the body of an
// update that corrects drift.
package bodydiff

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// identityPrefix starts every identity key of every tag scheme (entity.TagScheme).
const identityPrefix = "k8s-"

// Drifted says whether the entity Konnect holds differs from the desired body on the compared keys (every key of
// desired when keys is nil). Konnect fills defaults for fields the object leaves out; those are not drift. Tags
// compare as sets; labels compare exactly, except keys only Konnect may set (kong*, konnect*, mesh*, kic*, _*), so a
// label added or removed out of band is drift too. Identity tags and labels of another tag scheme (a "k8s-" key
// desired has not) are not drift: see KeepForeignIdentity.
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
	as, bs := StringList(a), StringList(b)
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(slices.Compact(as), slices.Compact(bs))
}

// withoutForeign returns the actual tags without the identity tags of another scheme than desired's.
func withoutForeign(desired, actual any) []string {
	foreign := foreignTags(StringList(desired), StringList(actual))
	var out []string
	for _, t := range StringList(actual) {
		if !slices.Contains(foreign, t) {
			out = append(out, t)
		}
	}
	return out
}

func StringList(v any) []string {
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

// Identity keys of other schemes. Versions of the operator with different schemes run side by side during an
// upgrade (the new one re-tags the entities in its hand-over while the old one still corrects drift), so an
// operator keeps the identity keys it does not write itself: a "k8s-..." tag or label whose key is not in the
// desired body is another scheme's, neither drift (Drifted) nor dropped by an update made for drift
// (KeepForeignIdentity). Without this the old version would remove the new version's tags every sync period and
// the new one would put them back: a flip-flop of updates for as long as both run.

// identityKey returns the key of an identity tag "k8s-key:value", "" for any other tag.
func identityKey(tag string) string {
	if !strings.HasPrefix(tag, identityPrefix) {
		return ""
	}
	key, _, _ := strings.Cut(tag, ":")
	return key
}

// foreignTags are the identity tags in actual whose keys no tag in desired has.
func foreignTags(desired, actual []string) []string {
	own := map[string]bool{}
	for _, t := range desired {
		own[identityKey(t)] = true
	}
	var out []string
	for _, t := range actual {
		if k := identityKey(t); k != "" && !own[k] {
			out = append(out, t)
		}
	}
	return out
}

// foreignLabel says whether an actual label key is an identity key that the desired labels do not have.
func foreignLabel(key string, desired map[string]any) bool {
	_, own := desired[key]
	return strings.HasPrefix(key, identityPrefix) && !own
}

// KeepForeignIdentity returns desired with the foreign identity tags or labels of actual (what the drift scan
// listed) added, for an update that corrects drift; desired itself is not changed.
func KeepForeignIdentity(desired, actual map[string]any) map[string]any {
	if actual == nil {
		return desired
	}
	body := maps.Clone(desired)
	if want, ok := desired["tags"]; ok {
		if foreign := foreignTags(StringList(want), StringList(actual["tags"])); len(foreign) > 0 {
			tags, _ := normalize(want).([]any)
			for _, t := range foreign {
				tags = append(tags, t)
			}
			body["tags"] = tags
		}
	}
	want, _ := normalize(desired["labels"]).(map[string]any)
	got, _ := normalize(actual["labels"]).(map[string]any)
	if want != nil {
		for k, v := range got {
			if foreignLabel(k, want) {
				want[k] = v
			}
		}
		body["labels"] = want
	}
	return body
}
