package entity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
