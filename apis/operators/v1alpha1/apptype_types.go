package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Approval says whether ALM may move an AppType to a newer version by itself.
// +kubebuilder:validation:Enum=Automatic;Manual
type Approval string

const (
	// ApprovalAutomatic upgrades as soon as the catalog offers a successor.
	ApprovalAutomatic Approval = "Automatic"
	// ApprovalManual waits until spec.approvedVersion names the offered version.
	ApprovalManual Approval = "Manual"
)

// RollbackPolicy says whether ALM goes back to the previous version by itself when an upgrade turns out bad.
// +kubebuilder:validation:Enum=Automatic;Never
type RollbackPolicy string

const (
	// RollbackAutomatic reinstalls the previous version when the version that took over in an upgrade stops being
	// available for longer than spec.rollbackAfter within spec.rollbackWindow after it took over.
	RollbackAutomatic RollbackPolicy = "Automatic"
	// RollbackNever leaves a bad upgrade in place (fail forward: publish a version that replaces it).
	RollbackNever RollbackPolicy = "Never"
)

// Rollback defaults.
const (
	// DefaultRollbackAfter is how long a version that took over may be unavailable before it is rolled back.
	DefaultRollbackAfter = 5 * time.Minute
	// DefaultRollbackWindow is how long after taking over a version that stops being available is rolled back.
	DefaultRollbackWindow = time.Hour
)

// SemverPattern matches a semantic version (https://semver.org) without a leading "v".
const SemverPattern = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`

// AppTypeSpec declares which operator package the user wants installed in this namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.approvedVersion) || self.approval == 'Manual'",message="approvedVersion is only used with approval: Manual"
type AppTypeSpec struct {
	// package is the name of the operator package to install, as published in a catalog. It cannot be changed:
	// create another AppType for another package.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="package is immutable; create a new AppType to install another package"
	Package string `json:"package"`

	// channel is the package channel to follow. Default: the package's default channel.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Channel string `json:"channel,omitempty"`

	// source is the name of the CatalogSource to install from. Default: every CatalogSource in this namespace and
	// in ALM's own namespace, highest priority first.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Source string `json:"source,omitempty"`

	// sourceNamespace is the namespace of source. Default: this AppType's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	SourceNamespace string `json:"sourceNamespace,omitempty"`

	// versionRange restricts the versions ALM may install, as a semver range such as ">=1.2.0 <2.0.0".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[0-9A-Za-z.+\-<>=!~^*| ]+$`
	VersionRange string `json:"versionRange,omitempty"`

	// approval is Automatic (upgrade as soon as a successor is published) or Manual (an upgrade waits until
	// approvedVersion names it). The first install is never held back.
	// +optional
	// +kubebuilder:default=Automatic
	Approval Approval `json:"approval,omitempty"`

	// approvedVersion approves the upgrade to this version when approval is Manual.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	ApprovedVersion string `json:"approvedVersion,omitempty"`

	// serviceAccountName names a ServiceAccount in this AppType's namespace whose permissions bound what ALM installs
	// for it: before anything is applied, ALM checks with SubjectAccessReviews that this ServiceAccount may create and
	// update every object of the bundle and grant every RBAC rule it declares (holding the permission, or escalate
	// and bind on roles), and refuses the install or upgrade otherwise, listing what is missing. Without it, ALM
	// installs with its own permissions only in namespaces a cluster admin trusts (see the README's trust model).
	// It may be changed: the versions created afterwards use the new name; an OperatorVersion keeps the name it was
	// created with.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// rollback is Never (the default: a bad upgrade stays, fail forward) or Automatic: when a version that took
	// over in an upgrade stops being available (its Deployments not Available) for longer than rollbackAfter, and
	// it stopped within rollbackWindow after it took over, ALM installs the version it took over from again through
	// the same hand-over (objects keep their UIDs), records the bad version in status.rolledBack with why (condition
	// RolledBack) and does not offer it again; a later version that replaces it is offered as usual. A rollback that
	// would drop a CRD stored version or make existing objects invalid is refused (condition RolledBack=False).
	// +optional
	// +kubebuilder:default=Never
	Rollback RollbackPolicy `json:"rollback,omitempty"`

	// rollbackAfter is how long the version that took over may be unavailable before an automatic rollback, as a
	// duration such as "5m" or "30s". Default: 5m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	RollbackAfter *metav1.Duration `json:"rollbackAfter,omitempty"`

	// rollbackWindow is how long after an upgrade took over (the old version's objects handed over) a version that
	// stops being available is rolled back automatically; after it, fail forward. A duration such as "1h".
	// Default: 1h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	RollbackWindow *metav1.Duration `json:"rollbackWindow,omitempty"`
}

// RolledBackVersion is a version ALM rolled back from: the resolver does not offer it again to this AppType.
type RolledBackVersion struct {
	// name is the OperatorVersion (bundle) name rolled back from.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// version is its version.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`
	// rolledBackTo is the OperatorVersion installed again in its place.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	RolledBackTo string `json:"rolledBackTo,omitempty"`
	// reason says why, e.g. "konnect-operator.v1.5.0 was not available for 5m0s after taking over: ...".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// time is when the rollback started.
	// +optional
	Time metav1.Time `json:"time,omitempty"`
}

// Candidate is one bundle the resolver looked at, and why it was or was not chosen.
type Candidate struct {
	// name is the bundle (OperatorVersion) name.
	Name string `json:"name"`
	// version is the bundle's version.
	Version string `json:"version"`
	// source is the CatalogSource (namespace/name) that serves the bundle.
	// +optional
	Source string `json:"source,omitempty"`
	// chosen is true for the bundle that was picked.
	// +optional
	Chosen bool `json:"chosen,omitempty"`
	// reason says why the bundle was not chosen (or that it was).
	Reason string `json:"reason"`
}

// AppTypeStatus reports what is installed and why.
type AppTypeStatus struct {
	// observedGeneration is the generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// installedVersion is the version of the installed OperatorVersion.
	// +optional
	InstalledVersion string `json:"installedVersion,omitempty"`

	// installedOperatorVersion is the name of the OperatorVersion installed for this AppType.
	// +optional
	InstalledOperatorVersion string `json:"installedOperatorVersion,omitempty"`

	// availableUpgrade is the version the catalog offers as the next upgrade, if any.
	// +optional
	AvailableUpgrade string `json:"availableUpgrade,omitempty"`

	// upgradePreview is what upgrading to availableUpgrade would change; absent when no upgrade is offered.
	// +optional
	UpgradePreview *UpgradePreview `json:"upgradePreview,omitempty"`

	// resolution explains the last resolution: the chosen bundle and why each other candidate was not chosen.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Resolution []Candidate `json:"resolution,omitempty"`

	// rolledBack are the versions ALM rolled back from automatically (spec.rollback: Automatic), newest last: the
	// resolver does not offer them again (status.resolution shows them with reason RolledBack) unless
	// spec.approvedVersion names one (approval: Manual). A version that replaces one of them is offered as usual.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	RolledBack []RolledBackVersion `json:"rolledBack,omitempty"`

	// conditions: Resolved, UpgradeAvailable, Deprecated, Ready, RolledBack.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AppType declares that an operator package should be installed in this namespace. ALM installs the newest version
// that fits the channel and version range, and upgrades it when a successor is published.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=at,categories=alm
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.spec.package`
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=`.spec.channel`
// +kubebuilder:printcolumn:name="Installed",type=string,JSONPath=`.status.installedVersion`
// +kubebuilder:printcolumn:name="Upgrade",type=string,JSONPath=`.status.availableUpgrade`
// +kubebuilder:printcolumn:name="Preview",type=string,JSONPath=`.status.upgradePreview.summary`,priority=0
// +kubebuilder:printcolumn:name="Approval",type=string,JSONPath=`.spec.approval`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:selectablefield:JSONPath=`.spec.package`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppType struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user wants installed.
	// +required
	Spec AppTypeSpec `json:"spec"`

	// status is what ALM installed.
	// +optional
	Status AppTypeStatus `json:"status,omitempty"`
}

// AppTypeList is a list of AppTypes.
//
// +kubebuilder:object:root=true
type AppTypeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppType `json:"items"`
}
