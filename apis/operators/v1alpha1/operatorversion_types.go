package v1alpha1

import (
	"github.com/operator-framework/api/pkg/lib/version"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// OperatorVersionPhase is where an OperatorVersion is in its life.
// +kubebuilder:validation:Enum=Pending;InstallReady;Installing;Succeeded;Failed;Replacing;Deleting
type OperatorVersionPhase string

const (
	// PhasePending: requirements (required CRDs, owned CRDs) are not met yet.
	PhasePending OperatorVersionPhase = "Pending"
	// PhaseInstallReady: requirements are met; the install strategy is about to be applied.
	PhaseInstallReady OperatorVersionPhase = "InstallReady"
	// PhaseInstalling: objects are applied; waiting for the Deployments to become Available.
	PhaseInstalling OperatorVersionPhase = "Installing"
	// PhaseSucceeded: every Deployment is Available.
	PhaseSucceeded OperatorVersionPhase = "Succeeded"
	// PhaseFailed: a requirement cannot be met or the install did not become Available in time; see reason.
	PhaseFailed OperatorVersionPhase = "Failed"
	// PhaseReplacing: a newer OperatorVersion has taken over; this one waits to be garbage-collected.
	PhaseReplacing OperatorVersionPhase = "Replacing"
	// PhaseDeleting: the OperatorVersion is being deleted.
	PhaseDeleting OperatorVersionPhase = "Deleting"
)

// CatalogReference names the catalog bundle an OperatorVersion was created from.
type CatalogReference struct {
	// name of the CatalogSource.
	// +required
	Name string `json:"name"`
	// namespace of the CatalogSource.
	// +required
	Namespace string `json:"namespace"`
}

// HandoffSpec is how a version takes part in its upgrade.
type HandoffSpec struct {
	// timeout bounds the wait for the operator's answer.
	Timeout metav1.Duration `json:"timeout"`
}

// HandoffStatus is a hand-over ALM requested of a new version, and the operator's answer.
type HandoffStatus struct {
	// from is the OperatorVersion the objects are handed over from.
	From string `json:"from"`
	// objects are what from owns, as "Kind namespace/name" (or "Kind name" for cluster-scoped ones).
	// +optional
	// +listType=atomic
	Objects []string `json:"objects,omitempty"`
	// requestedAt is when ALM asked; the version fails at requestedAt + spec.handoff.timeout.
	RequestedAt metav1.Time `json:"requestedAt"`
	// completed is written by the operator once it has taken over.
	// +optional
	Completed bool `json:"completed,omitempty"`
	// failed is written by the operator when it cannot take over: why.
	// +optional
	Failed string `json:"failed,omitempty"`
}

// RequiredPackage is a package a version depends on, and the versions of it that satisfy the dependency.
type RequiredPackage struct {
	// name is the package name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// versionRange is a semver range (e.g. ">=1.2.0 <2.0.0"); empty: any version.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	VersionRange string `json:"versionRange,omitempty"`
}

// OperatorVersionSpec is one version of one operator, as its bundle's ClusterServiceVersion describes it.
// +kubebuilder:validation:XValidation:rule="has(self.install) || (has(self.bundle) && has(self.bundle.image))",message="install is required unless bundle.image names the bundle image to read it from"
// +kubebuilder:validation:XValidation:rule="has(self.serviceAccountName) == has(oldSelf.serviceAccountName) && (!has(self.serviceAccountName) || self.serviceAccountName == oldSelf.serviceAccountName)",message="serviceAccountName is immutable; a new identity is a new OperatorVersion"
// The rules on optional fields sit here, on spec, and not on the fields: CEL does not evaluate a field's own rule
// when the field is removed, so a rule there would let an update drop the field.
// +kubebuilder:validation:XValidation:rule="has(self.bundle) == has(oldSelf.bundle) && (!has(self.bundle) || self.bundle == oldSelf.bundle)",message="bundle is immutable: it can be neither added, removed nor changed, since the install and upgrade loops apply only content that matches it; a new bundle is a new OperatorVersion",fieldPath=".bundle"
// +kubebuilder:validation:XValidation:rule="has(self.source) == has(oldSelf.source) && (!has(self.source) || self.source == oldSelf.source)",message="source is immutable: it names the CatalogSource whose pull options fetch the bundle; a new source is a new OperatorVersion",fieldPath=".source"
// +kubebuilder:validation:XValidation:rule="has(self.rollbackFrom) == has(oldSelf.rollbackFrom) && (!has(self.rollbackFrom) || self.rollbackFrom == oldSelf.rollbackFrom)",message="rollbackFrom is immutable: it can be neither added, removed nor changed",fieldPath=".rollbackFrom"
type OperatorVersionSpec struct {
	// packageName is the package (AppType) this version belongs to.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="packageName is immutable"
	PackageName string `json:"packageName"`

	// version is the semantic version of this operator version.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|[1-9][0-9]*)\\\\.(0|[1-9][0-9]*)\\\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\\\.[0-9A-Za-z-]+)*)?(\\\\+[0-9A-Za-z-]+(\\\\.[0-9A-Za-z-]+)*)?$')",message="version must be a semantic version such as 1.2.3 (no leading v)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="version is immutable; a new version is a new OperatorVersion"
	Version version.OperatorVersion `json:"version"`

	// replaces is the name of the OperatorVersion this one upgrades from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Replaces string `json:"replaces,omitempty"`

	// skips are names of versions this one may also upgrade from directly.
	// +optional
	// +listType=set
	Skips []string `json:"skips,omitempty"`

	// skipRange is a semver range of versions this one may upgrade from directly (olm.skipRange).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	SkipRange string `json:"skipRange,omitempty"`

	// channel is the catalog channel this version was resolved from.
	// +optional
	Channel string `json:"channel,omitempty"`

	// source is the catalog bundle this version was created from.
	// +optional
	Source *CatalogReference `json:"source,omitempty"`

	// bundle identifies the exact bundle content this version was resolved from. The install and upgrade loops apply
	// only content whose digest matches; a mismatch fails the version and names both digests, and so does a version
	// without bundle. Immutable (see the rules on spec): it can be neither added, removed nor changed.
	// +optional
	Bundle *BundleReference `json:"bundle,omitempty"`

	// serviceAccountName is the ServiceAccount in this namespace that ALM installs and upgrades this version as
	// (copied from the AppType's spec.serviceAccountName): nothing is applied unless SubjectAccessReviews say it may
	// create every object and grant every rule of the version. Empty: ALM's own permissions, only in a namespace a
	// cluster admin trusts.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// displayName is the operator's human-readable name.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// customresourcedefinitions lists the CRDs this version owns and requires, as in a ClusterServiceVersion.
	// +optional
	CustomResourceDefinitions opv1alpha1.CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`

	// requiredPackages are the packages this version depends on (the bundle's olm.package.required properties, or
	// olm.package entries of its metadata/dependencies.yaml): it stays Pending until a version of each, in its range,
	// has Succeeded in this namespace. The requirements loop declares an AppType for each one missing.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	RequiredPackages []RequiredPackage `json:"requiredPackages,omitempty"`

	// handoff says that the operator takes part in its upgrade (the CSV annotation operators.alm.dev/handoff): once
	// this version has Succeeded, ALM asks it (status.handoff) to take over from the version it replaces and moves
	// ownership only after it reports completed; it fails the version if the operator reports failed or does not
	// answer within timeout, and the old version keeps owning and running everything.
	// +optional
	Handoff *HandoffSpec `json:"handoff,omitempty"`

	// rollbackFrom says that this version is installed again in place of a newer one that took over and is rolled
	// back (the AppType's spec.rollback, or a downgrade by spec.approvedVersion or spec.versionRange): it takes the
	// objects over from that version as an upgrade does, and stands in for it in the upgrade graph, so that a
	// version that replaces the rolled back one replaces this one.
	// +optional
	RollbackFrom *RollbackSource `json:"rollbackFrom,omitempty"`

	// install is the install strategy, as in a ClusterServiceVersion: {strategy: deployment, spec: {deployments,
	// permissions, clusterPermissions}}. Its schema is not repeated here (the bundle validators check it); ALM
	// reports an invalid strategy on the OperatorVersion's status. Empty when spec.bundle.image names a bundle image
	// whose manifests the catalog does not carry: the install loop reads the strategy from the image.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Install opv1alpha1.NamedInstallStrategy `json:"install,omitempty"`

	// webhookdefinitions are the admission and conversion webhooks of the operator, as in a ClusterServiceVersion
	// (type ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook, deploymentName,
	// containerPort, targetPort, webhookPath, rules, failurePolicy, sideEffects, admissionReviewVersions,
	// conversionCRDs, generateName, ...). ALM serves each through a Service of its Deployment with a certificate of a
	// CA it creates for the version, and registers it with that CA. ALM reports an invalid definition on the
	// OperatorVersion's status.
	// +optional
	// +listType=atomic
	WebhookDefinitions []opv1alpha1.WebhookDescription `json:"webhookdefinitions,omitempty"`

	// objects are the bundle's other manifests that ALM applies with the install strategy: the CRDs this version
	// owns, and Services, ConfigMaps, Secrets, PodDisruptionBudgets, PriorityClasses, Roles, ServiceMonitors and
	// PrometheusRules as OLM applies them. Copied from the catalog bundle, so the lifecycle loops need no catalog.
	// +optional
	// +listType=atomic
	Objects []runtime.RawExtension `json:"objects,omitempty"`
}

// RollbackSource is the version a rollback goes back from.
type RollbackSource struct {
	// name is the OperatorVersion rolled back from.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// uid is that OperatorVersion's UID: a version created again later under the same name is another one.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// version is its version.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`
	// reason says why it is rolled back.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// automatic is true for an automatic rollback (spec.rollback: Automatic): the version rolled back from is not
	// offered to the AppType again. false for a downgrade the user asked for.
	// +optional
	Automatic bool `json:"automatic,omitempty"`
}

// Takeover is when and from which version a version took over in an upgrade.
type Takeover struct {
	// from is the OperatorVersion that was installed before, whose objects this version took over.
	// +required
	From string `json:"from"`
	// version is from's version.
	// +required
	Version string `json:"version"`
	// at is when the objects were handed over.
	// +required
	At metav1.Time `json:"at"`
}

// BundleReference is the bundle an OperatorVersion was resolved from, by digest.
type BundleReference struct {
	// image is the bundle image, by digest (repository@sha256:...), when the catalog serves the bundle as an image
	// whose manifests are not in the catalog: the install loop pulls it by that digest. Empty when the content is in
	// spec (directory and ConfigMap catalogs, and catalogs that carry olm.bundle.object).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// digest is the bundle image's manifest digest (image bundles), or the sha256 of the bundle's canonical content
	// as ALM installs it: spec.install, spec.customresourcedefinitions and spec.objects.
	// +required
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	Digest string `json:"digest"`
}

// OwnedObject is one object an OperatorVersion owns.
type OwnedObject struct {
	// group of the object's kind ("" for the core group).
	// +optional
	Group string `json:"group,omitempty"`
	// version of the object's kind.
	Version string `json:"version"`
	// kind of the object.
	Kind string `json:"kind"`
	// namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name of the object.
	Name string `json:"name"`
	// uid of the object.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// OperatorVersionStatus reports the install of an OperatorVersion.
//
// Who writes it: the Install loop while the version neither replaces nor is replaced by another; the Upgrade loop
// while it replaces one, and for the version it replaced once it has taken its objects over (phase Replacing,
// replacedBy). Every write is one merge patch carrying the resourceVersion it was computed from, so a writer working
// from a stale copy is refused and tries again on a fresh one: no write overwrites a newer status.
type OperatorVersionStatus struct {
	// observedGeneration is the generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is where this version is in its life.
	// +optional
	Phase OperatorVersionPhase `json:"phase,omitempty"`

	// reason is a CamelCase word for why it is in this phase.
	// +optional
	Reason string `json:"reason,omitempty"`

	// message explains the phase to a person.
	// +optional
	Message string `json:"message,omitempty"`

	// requirementStatus is the state of each requirement: required and owned CRDs, the install strategy.
	// +optional
	// +listType=atomic
	RequirementStatus []opv1alpha1.RequirementStatus `json:"requirementStatus,omitempty"`

	// owned is the inventory of objects this version created or adopted.
	// +optional
	// +listType=atomic
	Owned []OwnedObject `json:"owned,omitempty"`

	// replacedBy is the name of the OperatorVersion that replaces this one.
	// +optional
	ReplacedBy string `json:"replacedBy,omitempty"`

	// takenOver is when and from which version this version took over in an upgrade (written by the Upgrade loop
	// once it adopted the objects): an AppType with spec.rollback: Automatic rolls back to from if this version
	// stops being available within spec.rollbackWindow after at.
	// +optional
	TakenOver *Takeover `json:"takenOver,omitempty"`

	// handoff is the domain-specific hand-over of a version that takes part in its upgrade (spec.handoff): what ALM
	// asks it to take over, and its answer. ALM writes from, objects and requestedAt; the operator writes completed
	// (or failed) once it has taken over, and ALM then moves ownership.
	// +optional
	Handoff *HandoffStatus `json:"handoff,omitempty"`

	// conditions: RequirementsMet, Installed, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorVersion is one version of one operator installed in a namespace, created by ALM from a catalog bundle.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ov,categories=alm
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.spec.packageName`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Replaces",type=string,JSONPath=`.spec.replaces`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:selectablefield:JSONPath=`.spec.packageName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OperatorVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the operator version, as its bundle describes it.
	// +required
	Spec OperatorVersionSpec `json:"spec"`

	// status reports the install.
	// +optional
	Status OperatorVersionStatus `json:"status,omitempty"`
}

// OperatorVersionList is a list of OperatorVersions.
//
// +kubebuilder:object:root=true
type OperatorVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorVersion `json:"items"`
}
