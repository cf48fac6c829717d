package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMapSource serves the bundles stored in ConfigMaps of the CatalogSource's namespace that carry the label
// operators.alm.dev/catalog=<CatalogSource name> (what `almctl publish` writes), one bundle per ConfigMap.
type ConfigMapSource struct {
	// selector adds label requirements to the catalog label, e.g. to serve only some packages.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// DirectorySource serves a directory of bundles or File-Based Catalog documents in ALM's filesystem.
type DirectorySource struct {
	// path is an absolute path in the ALM manager's filesystem. Only CatalogSources in ALM's namespace may name
	// any path; those of other namespaces only a path under the manager's --directory-catalog-root (none unless a
	// cluster admin sets it); no CatalogSource a path that overlaps the bundle cache (--bundle-cache-dir). The path
	// is checked with its symlinks and ".." resolved, and the walk does not leave it: a source that breaks a rule
	// serves nothing and is Ready=False with reason DirectoryRefused.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`
}

// ImageSource serves a File-Based Catalog image in OLM's format from an OCI registry: the directory that the image's
// operators.operatorframework.io.index.configs.v1 label names (default /configs). Catalogs built with opm for OLM
// v0 and v1 load unchanged; bundles whose catalog entry carries no manifests are pulled from their bundle image, by
// digest, when an install needs them.
// +kubebuilder:validation:XValidation:rule="!(self.ref.contains('@sha256:') && has(self.pollInterval))",message="pollInterval applies to a tag; a digest reference never changes and is not polled"
type ImageSource struct {
	// ref is the catalog image: a tag (e.g. registry.example/catalogs/ops:v4.18), polled for a new digest, or a
	// digest (e.g. registry.example/catalogs/ops@sha256:...), never polled.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Ref string `json:"ref"`

	// pollInterval is how often a tag is checked for a new digest. A poll asks only for the manifest digest: an
	// unchanged catalog downloads nothing and is not parsed again. Default 10m; at least 1m (10s on loopback
	// registries, for local development).
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`

	// pullSecrets name kubernetes.io/dockerconfigjson Secrets in the CatalogSource's namespace whose credentials
	// are used to pull the catalog image and its bundle images.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	PullSecrets []string `json:"pullSecrets,omitempty"`

	// caBundle selects a key of a ConfigMap in the CatalogSource's namespace that holds PEM CA certificates to trust
	// for the registry, in addition to the system roots (private registries).
	// +optional
	CABundle *ConfigMapKeySelector `json:"caBundle,omitempty"`

	// insecure pulls over plain HTTP. It is honoured only for registries on loopback (localhost, 127.0.0.0/8, ::1),
	// as used by local development; anything else must use TLS.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// ConfigMapKeySelector selects a key of a ConfigMap in the referring object's namespace.
type ConfigMapKeySelector struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// key in the ConfigMap's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// CatalogSourceSpec says where bundles come from. Exactly one of configMap, directory and image is set.
// +kubebuilder:validation:XValidation:rule="[has(self.configMap), has(self.directory), has(self.image)].filter(x, x).size() == 1",message="exactly one of configMap, directory or image must be set"
type CatalogSourceSpec struct {
	// displayName is a human-readable name for the catalog.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DisplayName string `json:"displayName,omitempty"`

	// priority orders catalogs when several offer the same package: higher wins. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	Priority int32 `json:"priority,omitempty"`

	// configMap serves bundles stored in labelled ConfigMaps.
	// +optional
	ConfigMap *ConfigMapSource `json:"configMap,omitempty"`

	// directory serves bundles from a directory.
	// +optional
	Directory *DirectorySource `json:"directory,omitempty"`

	// image serves a File-Based Catalog image from an OCI registry: what real clusters use.
	// +optional
	Image *ImageSource `json:"image,omitempty"`

	// rollout upgrades the installs of a package to a new version of it in waves, and halts when one fails (see
	// RolloutPolicy; status.rollouts shows the progress). Without it, every install that follows the catalog
	// upgrades as soon as a version that replaces its own is published.
	// +optional
	Rollout *RolloutPolicy `json:"rollout,omitempty"`
}

// PackageSummary describes one package a catalog serves.
type PackageSummary struct {
	// name of the package.
	Name string `json:"name"`
	// defaultChannel of the package.
	// +optional
	DefaultChannel string `json:"defaultChannel,omitempty"`
	// channels of the package.
	// +optional
	// +listType=atomic
	Channels []string `json:"channels,omitempty"`
	// latestVersion is the highest version on the default channel.
	// +optional
	LatestVersion string `json:"latestVersion,omitempty"`
}

// RejectedBundle is a bundle a catalog excluded, with the file and rule that excluded it.
type RejectedBundle struct {
	// name is the bundle name, or its path when the name could not be read.
	Name string `json:"name"`
	// file is the file (or ConfigMap) where the problem is.
	// +optional
	File string `json:"file,omitempty"`
	// rule is the rule that was broken.
	Rule string `json:"rule"`
	// message explains the problem and how to fix it.
	Message string `json:"message"`
}

// CatalogSourceStatus reports what the catalog serves.
type CatalogSourceStatus struct {
	// observedGeneration is the generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// packages the catalog serves.
	// +optional
	// +listType=map
	// +listMapKey=name
	Packages []PackageSummary `json:"packages,omitempty"`
	// packageCount is the number of packages served.
	// +optional
	PackageCount int32 `json:"packageCount,omitempty"`
	// bundleCount is the number of bundles served.
	// +optional
	BundleCount int32 `json:"bundleCount,omitempty"`
	// rejectedCount is the number of bundles excluded.
	// +optional
	RejectedCount int32 `json:"rejectedCount,omitempty"`
	// rejectedBundles lists excluded bundles and why (at most 100 are listed).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	RejectedBundles []RejectedBundle `json:"rejectedBundles,omitempty"`
	// lastSync is when the catalog was last loaded.
	// +optional
	LastSync *metav1.Time `json:"lastSync,omitempty"`
	// image reports the catalog image that is served (image sources only).
	// +optional
	Image *ImageStatus `json:"image,omitempty"`
	// conditions: Ready, Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// rollouts is the progress of each rollout under spec.rollout: one per version of a package being rolled out
	// (installs on different channels may be offered different versions), and a halted one until a rollout of a
	// newer version of its package is complete.
	// +optional
	// +listType=map
	// +listMapKey=package
	// +listMapKey=version
	// +kubebuilder:validation:MaxItems=256
	Rollouts []RolloutStatus `json:"rollouts,omitempty"`
}

// ImageStatus reports an image source: which digest is served and when the registry was last asked.
type ImageStatus struct {
	// ref is the reference that is served, by digest (repository@sha256:...).
	// +optional
	Ref string `json:"ref,omitempty"`
	// digest is the manifest digest of the catalog image that is served.
	// +optional
	Digest string `json:"digest,omitempty"`
	// lastPoll is when the registry was last asked for the digest, successfully or not.
	// +optional
	LastPoll *metav1.Time `json:"lastPoll,omitempty"`
	// lastChange is when a new digest was loaded and began to be served.
	// +optional
	LastChange *metav1.Time `json:"lastChange,omitempty"`
}

// CatalogSource is a source of operator bundles: labelled ConfigMaps, a directory or a File-Based Catalog image.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=catsrc,categories=alm
// +kubebuilder:printcolumn:name="Display",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Packages",type=integer,JSONPath=`.status.packageCount`
// +kubebuilder:printcolumn:name="Bundles",type=integer,JSONPath=`.status.bundleCount`
// +kubebuilder:printcolumn:name="Rejected",type=integer,JSONPath=`.status.rejectedCount`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.lastSync`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image.ref`,priority=1
// +kubebuilder:printcolumn:name="Digest",type=string,JSONPath=`.status.image.digest`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
type CatalogSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says where the bundles come from.
	// +required
	Spec CatalogSourceSpec `json:"spec"`

	// status reports what the catalog serves.
	// +optional
	Status CatalogSourceStatus `json:"status,omitempty"`
}

// CatalogSourceList is a list of CatalogSources.
//
// +kubebuilder:object:root=true
type CatalogSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CatalogSource `json:"items"`
}
