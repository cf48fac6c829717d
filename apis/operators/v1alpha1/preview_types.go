package v1alpha1

// ChangeOp says how an upgrade changes something.
// +kubebuilder:validation:Enum=Added;Changed;Removed
type ChangeOp string

const (
	// ChangeAdded: the offered version has it, the installed one does not.
	ChangeAdded ChangeOp = "Added"
	// ChangeChanged: both have it, with different content.
	ChangeChanged ChangeOp = "Changed"
	// ChangeRemoved: the installed version has it, the offered one does not.
	ChangeRemoved ChangeOp = "Removed"
)

// RBAC scopes of a PreviewChange.
const (
	// ScopeNamespace: a rule of the install strategy's permissions (a Role in the install namespace).
	ScopeNamespace = "Namespace"
	// ScopeCluster: a rule of its clusterPermissions (a ClusterRole).
	ScopeCluster = "Cluster"
)

// MaxPreviewItems is the most changes each list of an UpgradePreview holds; the others are counted in more.
const MaxPreviewItems = 10

// PreviewChange is one change an upgrade would make.
type PreviewChange struct {
	// op is Added, Changed or Removed.
	// +required
	Op ChangeOp `json:"op"`
	// kind is the object's kind (Deployment, ServiceAccount, CustomResourceDefinition, ...), the RBAC rule's role
	// kind (Role, ClusterRole) or the webhook's type (ValidatingAdmissionWebhook, ...).
	// +required
	// +kubebuilder:validation:MaxLength=253
	Kind string `json:"kind"`
	// name is the object's or webhook's name; for an RBAC rule, the ServiceAccount it is granted to.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// scope is Namespace or Cluster for an RBAC rule.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Scope string `json:"scope,omitempty"`
	// detail says what changed: a Deployment's images, args and env; an RBAC rule's verbs, resources and groups; a
	// CRD's versions and schema.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Detail string `json:"detail,omitempty"`
	// refused, when set, says why ALM would refuse the change: the hostile-input policy rule an added RBAC rule
	// breaks (installed only with the rule's opt-in annotation), or why a CRD update is unsafe.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Refused string `json:"refused,omitempty"`
}

// UpgradePreview is what upgrading from the installed version to the offered one would change, computed from the
// two bundles.
type UpgradePreview struct {
	// from is the installed version.
	// +required
	From string `json:"from"`
	// to is the offered version the preview is of: status.availableUpgrade, the version spec.approvedVersion
	// approves when approval is Manual.
	// +required
	To string `json:"to"`
	// summary is one line, e.g. "~1 Deployment (image), +2 RBAC rules, 0 refused".
	// +required
	// +kubebuilder:validation:MaxLength=256
	Summary string `json:"summary"`
	// objects are the objects added, changed and removed (RBAC rules, CRDs and webhooks have lists of their own).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Objects []PreviewChange `json:"objects,omitempty"`
	// rbacRules are the RBAC rules granted or revoked.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	RBACRules []PreviewChange `json:"rbacRules,omitempty"`
	// crds are the CustomResourceDefinitions added, changed and removed, with the upgrade-safety verdict.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	CRDs []PreviewChange `json:"crds,omitempty"`
	// webhooks are the admission and conversion webhooks added, changed and removed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Webhooks []PreviewChange `json:"webhooks,omitempty"`
	// more counts the changes left out of the lists above (each holds at most 10).
	// +optional
	More int32 `json:"more,omitempty"`
	// error says why the preview could not be computed (e.g. a bundle's manifests cannot be read); the lists are
	// then empty.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Error string `json:"error,omitempty"`
}
