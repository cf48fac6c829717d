package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutPolicy rolls a new version of a package out to the installs that follow it in waves, as progressive
// delivery tools do (Argo Rollouts' steps, Flagger's canary analysis, cluster-api's maxUnavailable, Fleet's
// partitions): a first wave (the canary), a soak time during which every upgraded install must stay Succeeded with
// its Deployments available, then growing waves with at most maxConcurrent installs upgrading at once. A failure
// in any wave halts the rollout of that version everywhere: installs not yet upgraded stay on their version, and
// the failed ones roll back as their AppType says (spec.rollback). A newer version published after the bad one is
// rolled out from its first wave again.
//
// The policy belongs to the CatalogSource because the catalog is where a version is published: whoever may publish
// to it (or edit it) decides how fast what they publish reaches the installs that follow it, and the installs of a
// package served by a CatalogSource in ALM's namespace (every namespace) form one fleet. An AppType's owner keeps
// the last word on their own install: approval: Manual holds it whatever its wave (see AppTypeSpec.approval).
type RolloutPolicy struct {
	// packages limits the policy to these packages of the catalog. Default: every package it serves.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	Packages []string `json:"packages,omitempty"`

	// canary is the first wave. Default: none (the first wave is waves[0]).
	// +optional
	Canary *RolloutCanary `json:"canary,omitempty"`

	// soak is how long every install upgraded in a wave must stay Succeeded with its Deployments available before
	// the next wave starts, counted from the last one of the wave that took over; a duration such as "10m".
	// Default: 0 (the next wave starts once the wave has upgraded).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	Soak *metav1.Duration `json:"soak,omitempty"`

	// waves are the waves after the canary, each as how many installs have been upgraded once it is done: a
	// count (5) or a percentage of the installs of the rollout, rounded up ("25%"), growing. A last wave of every
	// remaining install is implied. Example: canary count 1 and waves ["25%"] with 20 installs: 1, then 4 more
	// (5 = 25%), then the other 15. Default: none (one wave of every install after the canary).
	// A value that is neither a positive count nor a percentage is ignored.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Waves []intstr.IntOrString `json:"waves,omitempty"`

	// maxConcurrent is how many installs may be upgrading (their new version created and not yet Succeeded and
	// taken over) at once, within the waves that have started. Default: 0, no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxConcurrent int32 `json:"maxConcurrent,omitempty"`
}

// RolloutCanary chooses the installs of the first wave: a count or a percentage of the installs (in order of
// namespace and AppType name), or the AppTypes a label selector matches.
// +kubebuilder:validation:XValidation:rule="[has(self.count), has(self.percent), has(self.selector)].filter(x, x).size() == 1",message="exactly one of count, percent or selector must be set"
type RolloutCanary struct {
	// count is the number of installs in the first wave.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Count *int32 `json:"count,omitempty"`
	// percent is the share of the installs in the first wave, rounded up (at least one).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`
	// selector selects the AppTypes of the first wave by their labels, e.g. matchLabels: {rollout: canary}. When
	// it matches none, the rollout starts with waves[0].
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// RolloutPhase is where the rollout of one version stands.
// +kubebuilder:validation:Enum=Progressing;Soaking;Halted;Complete
type RolloutPhase string

const (
	// RolloutProgressing: the installs of the current wave are being upgraded.
	RolloutProgressing RolloutPhase = "Progressing"
	// RolloutSoaking: the current wave has upgraded; the next starts at soakUntil if none of its installs fails.
	RolloutSoaking RolloutPhase = "Soaking"
	// RolloutHalted: an install failed; no other install is upgraded to this version.
	RolloutHalted RolloutPhase = "Halted"
	// RolloutComplete: every install of the rollout runs the version (or waits for its own approval).
	RolloutComplete RolloutPhase = "Complete"
)

// AnnotationRolloutTarget on an OperatorVersion that a rollout created names the bundle it was created on the way
// to (itself, or a later version when it is a hop on the upgrade path): the install belongs to that rollout.
const AnnotationRolloutTarget = "operators.alm.dev/rollout-target"

// RolloutHalt says which install stopped a rollout and why.
type RolloutHalt struct {
	// install is the AppType (namespace/name) whose upgrade failed.
	// +kubebuilder:validation:MaxLength=512
	Install string `json:"install"`
	// reason is the failed version's reason (e.g. ProgressDeadlineExceeded), or AutomaticRollback.
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason"`
	// message says what failed.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
	// time is when the halt was recorded.
	// +optional
	Time metav1.Time `json:"time,omitempty"`
}

// RolloutStatus is the progress of the rollout of one version of one package to the installs that follow it.
type RolloutStatus struct {
	// package is the package rolled out.
	// +kubebuilder:validation:MaxLength=253
	Package string `json:"package"`
	// version is the version rolled out.
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`
	// bundle is the bundle (OperatorVersion) name rolled out.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Bundle string `json:"bundle,omitempty"`
	// phase: Progressing, Soaking, Halted or Complete.
	Phase RolloutPhase `json:"phase"`
	// wave is the current wave, from 1; waves how many there are for this many installs.
	Wave  int32 `json:"wave"`
	Waves int32 `json:"waves"`
	// installs counts the installs of the rollout; upgraded those that run the version, upgrading those on their
	// way, held those that wait for their own approval (approval: Manual), failed those whose upgrade failed or
	// was rolled back, pending those whose wave has not come (or that wait for a free slot).
	Installs  int32 `json:"installs"`
	Upgraded  int32 `json:"upgraded"`
	Upgrading int32 `json:"upgrading"`
	Held      int32 `json:"held"`
	Failed    int32 `json:"failed"`
	Pending   int32 `json:"pending"`
	// soakUntil is when the next wave starts (phase Soaking).
	// +optional
	SoakUntil *metav1.Time `json:"soakUntil,omitempty"`
	// halt says which install failed and why (phase Halted).
	// +optional
	Halt *RolloutHalt `json:"halt,omitempty"`
	// lastTransitionTime is when the phase or the wave last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// Condition type and reason the rollout (waves) loop sets on AppTypes.
const (
	// ConditionRolloutHalted (on an AppType): True while the rollout of the version it would upgrade to (or runs) is
	// halted because an install failed; the message names the install, why, and the CatalogSource. Absent otherwise.
	ConditionRolloutHalted = "RolloutHalted"
	// ReasonInstallFailed: an install of the rollout failed (the halt's message says which and why).
	ReasonInstallFailed = "InstallFailed"
)

// AnnotationRolloutVersion on an OperatorVersion that a rollout created is the version of the bundle
// AnnotationRolloutTarget names.
const AnnotationRolloutVersion = "operators.alm.dev/rollout-version"

// Covers says whether the policy applies to package pkg (spec.rollout.packages; empty: every package).
func (p *RolloutPolicy) Covers(pkg string) bool {
	if p == nil {
		return false
	}
	if len(p.Packages) == 0 {
		return true
	}
	for _, name := range p.Packages {
		if name == pkg {
			return true
		}
	}
	return false
}
