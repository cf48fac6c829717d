package v1alpha1

// Condition types. Every ALM object reports Ready; the others say why it is (not) ready.
const (
	// ConditionReady is True when the object does what it was declared for: an AppType's operator is installed and
	// Succeeded, an OperatorVersion's deployments are Available, a CatalogSource's index is loaded.
	ConditionReady = "Ready"
	// ConditionResolved is True when an AppType's package resolved to a bundle in a catalog.
	ConditionResolved = "Resolved"
	// ConditionUpgradeAvailable is True when an AppType has a newer version waiting (for approval when Manual).
	ConditionUpgradeAvailable = "UpgradeAvailable"
	// ConditionRequirementsMet is True when every required CRD of an OperatorVersion is Established and its owned CRDs
	// can be created or updated safely.
	ConditionRequirementsMet = "RequirementsMet"
	// ConditionInstalled is True when every object of an OperatorVersion's install strategy exists as declared.
	ConditionInstalled = "Installed"
	// ConditionDegraded is True when a CatalogSource rejected some bundles; the others keep serving.
	ConditionDegraded = "Degraded"
)

// Condition reasons.
const (
	ReasonResolved           = "Resolved"
	ReasonPackageNotFound    = "PackageNotFound"
	ReasonChannelNotFound    = "ChannelNotFound"
	ReasonNoCandidate        = "NoCandidate"
	ReasonInvalidSpec        = "InvalidSpec"
	ReasonInstalling         = "Installing"
	ReasonInstalled          = "Installed"
	ReasonUpgradePending     = "UpgradePending"
	ReasonAwaitingApproval   = "AwaitingApproval"
	ReasonUpToDate           = "UpToDate"
	ReasonRequirementsMet    = "RequirementsMet"
	ReasonRequirementMissing = "RequirementMissing"
	ReasonCRDUnsafe          = "CRDUpdateUnsafe"
	ReasonInvalidStrategy    = "InvalidInstallStrategy"
	ReasonDeploymentNotReady = "DeploymentNotAvailable"
	ReasonInstallTimeout     = "InstallTimeout"
	// ReasonProgressDeadlineExceeded: a Deployment's rollout exceeded its progressDeadlineSeconds (e.g. its pods
	// crash); the version fails at once, as OLM's install check does.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonReplacing                = "Replacing"
	ReasonSynced                   = "Synced"
	ReasonSourceError              = "SourceError"
	ReasonBundlesRejected          = "BundlesRejected"
	ReasonAllBundlesValid          = "AllBundlesValid"
)
