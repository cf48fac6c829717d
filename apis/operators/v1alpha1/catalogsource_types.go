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
	// path is an absolute path in the ALM manager's filesystem.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`
}

// CatalogSourceSpec says where bundles come from. Exactly one of configMap and directory is set.
// +kubebuilder:validation:XValidation:rule="has(self.configMap) != has(self.directory)",message="exactly one of configMap or directory must be set"
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
	// conditions: Ready, Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CatalogSource is a source of operator bundles: labelled ConfigMaps or a directory.
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
