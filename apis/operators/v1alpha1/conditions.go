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
	// ConditionDeprecated is True when the catalog deprecates what an AppType installs or follows: its package, its
	// channel or its installed bundle (olm.deprecations); the message is the catalog's.
	ConditionDeprecated = "Deprecated"
	// ConditionRequirementsMet is True when every required CRD of an OperatorVersion is Established and its owned CRDs
	// can be created or updated safely.
	ConditionRequirementsMet = "RequirementsMet"
	// ConditionInstalled is True when every object of an OperatorVersion's install strategy exists as declared.
	ConditionInstalled = "Installed"
	// ConditionDegraded is True when a CatalogSource rejected some bundles; the others keep serving.
	ConditionDegraded = "Degraded"
	// ConditionBundleVerified is True when an OperatorVersion's bundle content was read and its digest matches
	// spec.bundle.digest; nothing is applied before it is.
	ConditionBundleVerified = "BundleVerified"
	// ConditionAuthorized is False when an OperatorVersion's install or upgrade was refused because the identity it
	// acts for (spec.serviceAccountName, or ALM itself in a trusted namespace) may not create or grant what it needs.
	ConditionAuthorized = "Authorized"
	// ConditionHandoff (on a version with spec.handoff): whether its operator has taken over from the version it
	// replaces (reasons HandoffRequested, HandoffCompleted, HandoffFailed, HandoffTimedOut).
	ConditionHandoff = "HandoffCompleted"
	// ConditionRolledBack (on an AppType): True when ALM rolled back from a version (reason AutomaticRollback: it
	// was not available after taking over; Downgraded: spec.approvedVersion or spec.versionRange asked for an older
	// version), naming the version and why; Unknown with the same reasons while the older version installs; False
	// when a rollback or downgrade was refused (RollbackRefused: it would drop a CRD stored version, make existing
	// objects invalid, or its version is not in a catalog) or the older version failed (RollbackFailed; the newer
	// one keeps running).
	ConditionRolledBack = "RolledBack"
)

// Reasons of the AppType condition RolledBack.
const (
	ReasonAutomaticRollback = "AutomaticRollback"
	ReasonDowngraded        = "Downgraded"
	ReasonRollbackRefused   = "RollbackRefused"
	ReasonRollbackFailed    = "RollbackFailed"
)

// Condition reasons.
const (
	ReasonResolved         = "Resolved"
	ReasonPackageNotFound  = "PackageNotFound"
	ReasonChannelNotFound  = "ChannelNotFound"
	ReasonNoCandidate      = "NoCandidate"
	ReasonInvalidSpec      = "InvalidSpec"
	ReasonInstalling       = "Installing"
	ReasonInstalled        = "Installed"
	ReasonUpgradePending   = "UpgradePending"
	ReasonAwaitingApproval = "AwaitingApproval"
	ReasonUpToDate         = "UpToDate"
	// Reasons of the Deprecated condition: the most specific deprecation that applies (bundle, then channel, then
	// package); NotDeprecated when none does.
	ReasonPackageDeprecated  = "PackageDeprecated"
	ReasonChannelDeprecated  = "ChannelDeprecated"
	ReasonBundleDeprecated   = "BundleDeprecated"
	ReasonNotDeprecated      = "NotDeprecated"
	ReasonRequirementsMet    = "RequirementsMet"
	ReasonRequirementMissing = "RequirementMissing"
	ReasonHandoffRequested   = "HandoffRequested"
	ReasonHandoffCompleted   = "HandoffCompleted"
	ReasonHandoffFailed      = "HandoffFailed"
	ReasonHandoffTimedOut    = "HandoffTimedOut"
	// ReasonDependencyCycle: the packages a version requires require its own package back (spec.requiredPackages).
	ReasonDependencyCycle    = "DependencyCycle"
	ReasonCRDUnsafe          = "CRDUpdateUnsafe"
	ReasonInvalidStrategy    = "InvalidInstallStrategy"
	ReasonDeploymentNotReady = "DeploymentNotAvailable"
	ReasonInstallTimeout     = "InstallTimeout"
	// ReasonProgressDeadlineExceeded: a Deployment's rollout exceeded its progressDeadlineSeconds (e.g. its pods
	// crash); the version fails at once, as OLM's install check does.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// Reasons of an Installing version's Ready=False when the cluster already knows why its pods do not become
	// available (from the Deployment's conditions or its pods'); the message names the Deployment, the pod or
	// container and the cause. Otherwise the reason is DeploymentNotAvailable with the replica counts.
	//
	// ReasonImagePullFailed: a container's image is not found or cannot be pulled (the kubelet's ErrImagePull,
	// ImagePullBackOff, InvalidImageName, ...).
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonCrashLoopBackOff: a container keeps exiting; the message has its exit code and, when the kubelet reports
	// them, its last log lines.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonUnschedulable: no node can run the pods (the scheduler's PodScheduled=False message says why).
	ReasonUnschedulable = "Unschedulable"
	// ReasonPodCreationFailed: the pods cannot be created (the Deployment's ReplicaFailure condition, e.g. a
	// ResourceQuota is exceeded or admission refused them) or their containers cannot be created (a missing
	// ConfigMap or Secret, no entrypoint: CreateContainerConfigError, CreateContainerError).
	ReasonPodCreationFailed = "PodCreationFailed"
	ReasonReplacing         = "Replacing"
	ReasonSynced            = "Synced"
	ReasonSourceError       = "SourceError"
	ReasonBundlesRejected   = "BundlesRejected"
	ReasonAllBundlesValid   = "AllBundlesValid"
	// ReasonDirectoryRefused: a directory CatalogSource names a path its namespace may not read (only ALM's namespace
	// may, and other namespaces under the manager's --directory-catalog-root; no namespace under
	// --bundle-cache-dir), or the directory holds what ALM does not walk (a symlink out of it, a special file
	// system, a device or FIFO). The source serves nothing; the message names spec.directory.path, the rule and the
	// fix.
	ReasonDirectoryRefused = "DirectoryRefused"

	// Reasons of an image CatalogSource's Ready=False and of an OperatorVersion whose bundle image cannot be pulled:
	// what went wrong with the registry or the image. The message names the image and the cause.
	ReasonUnauthorized        = "Unauthorized"
	ReasonTLSError            = "TLSError"
	ReasonImageNotFound       = "ImageNotFound"
	ReasonImageTooLarge       = "ImageTooLarge"
	ReasonImageRefused        = "ImageRefused"
	ReasonRegistryUnreachable = "RegistryUnreachable"
	ReasonSQLiteIndexImage    = "SQLiteIndexImage"
	ReasonPullFailed          = "PullFailed"
	// ReasonDigestMismatch: content did not match the digest it was resolved or referenced by (a tag moved, a
	// catalog or ConfigMap changed between resolution and install, a registry served other bytes).
	ReasonDigestMismatch = "DigestMismatch"
	// ReasonNoBundleDigest: the OperatorVersion has no spec.bundle, so there is no digest to verify its content
	// against; nothing is applied. ALM records spec.bundle on every version it creates; a version without one was
	// written by someone else (or by an ALM that predates bundle digests) and a newer version has to replace it.
	ReasonNoBundleDigest = "NoBundleDigest"
	// ReasonBundleVerified: the bundle content matches spec.bundle.digest.
	ReasonBundleVerified = "BundleVerified"
	// ReasonBundleUnavailable: the bundle image could not be pulled yet; the version stays Pending and nothing is
	// applied.
	ReasonBundleUnavailable = "BundleUnavailable"
	// ReasonInvalidBundle: the bundle image does not load as a registry+v1 bundle (the message names the file and the
	// rule), or holds another package or version than the OperatorVersion; a newer version has to fix it.
	ReasonInvalidBundle = "InvalidBundle"
	// ReasonCRDOwnedByAnotherPackage: a CRD this version owns is already owned in the cluster by another package's
	// version (two packages of one catalog may both ship it; only one may install it).
	ReasonCRDOwnedByAnotherPackage = "CRDOwnedByAnotherPackage"
	// ReasonInstallRefused: the ServiceAccount the version installs as lacks permissions the install needs (the
	// message lists each as a kubectl auth can-i line), or the version names none in a namespace that is not trusted
	// for installs with ALM's own permissions. Nothing is applied; ALM retries, so granting the permission proceeds.
	ReasonInstallRefused = "InstallRefused"
	// ReasonAuthorized: the identity the version acts for may create and grant everything it installs.
	ReasonAuthorized = "Authorized"
)
