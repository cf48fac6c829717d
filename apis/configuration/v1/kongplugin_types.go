package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KongProtocol is a protocol a plugin runs on.
// +kubebuilder:validation:Enum=http;https;grpc;grpcs;tcp;tls;udp;ws;wss
type KongProtocol string

// ConfigSource is where a plugin's configuration comes from when it holds secrets.
type ConfigSource struct {
	// secretKeyRef names the Secret (in the KongPlugin's namespace) and the key whose value is the plugin's
	// configuration as a JSON (or YAML) object.
	// +required
	SecretValue SecretValueFromSource `json:"secretKeyRef"`
}

// SecretValueFromSource names one key of a Secret in the referrer's namespace.
type SecretValueFromSource struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Secret string `json:"name"`
	// key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// PluginOrdering overrides a plugin's place in Kong's execution order (Kong Enterprise).
type PluginOrdering struct {
	// before maps a request phase (e.g. access) to the plugins this one runs before.
	// +optional
	Before map[string][]string `json:"before,omitempty"`
	// after maps a request phase to the plugins this one runs after.
	// +optional
	After map[string][]string `json:"after,omitempty"`
}

// KongPluginStatus is reported by controllers that use the plugin; the Konnect operator reports on the
// KongPluginBindings that apply it.
type KongPluginStatus struct {
	// conditions of the plugin.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KongPlugin is the configuration of a Kong plugin. It is not a Konnect entity by itself: a KongPluginBinding (or
// the konghq.com/plugins annotation of a KongService, KongRoute or KongConsumer) applies it in a control plane.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kp
// +kubebuilder:printcolumn:name="Plugin-Type",type=string,JSONPath=`.plugin`,description="Name of the plugin"
// +kubebuilder:printcolumn:name="Disabled",type=boolean,JSONPath=`.disabled`,description="Whether the plugin is disabled",priority=1
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.config`,description="Configuration of the plugin",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!(has(self.config) && has(self.configFrom))",message="Using both config and configFrom fields is not allowed."
// +kubebuilder:validation:XValidation:rule="self.plugin == oldSelf.plugin",message="The plugin field is immutable"
type KongPlugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// consumerRef is accepted for compatibility with Kong's manifests; bind the plugin to a consumer with a
	// KongPluginBinding instead.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ConsumerRef string `json:"consumerRef,omitempty"`
	// disabled turns the plugin off (Kong's enabled: false).
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// config is the plugin's configuration: what Kong's Admin API takes as the plugin's `config`. Only one of config
	// and configFrom may be set.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Config apiextensionsv1.JSON `json:"config,omitempty"`
	// configFrom reads the configuration from a Secret, for configuration that holds secrets.
	// +optional
	ConfigFrom *ConfigSource `json:"configFrom,omitempty"`
	// plugin is the name of the Kong plugin, e.g. rate-limiting.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	PluginName string `json:"plugin"`
	// instance_name identifies this instance of the plugin (unique in its control plane).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	InstanceName string `json:"instance_name,omitempty"`
	// run_on is accepted for compatibility with Kong's manifests (service mesh deployments); Konnect ignores it.
	// +optional
	// +kubebuilder:validation:Enum=first;second;all
	RunOn string `json:"run_on,omitempty"`
	// protocols the plugin runs on; Kong's default for the plugin when empty.
	// +optional
	// +kubebuilder:validation:MaxItems=9
	Protocols []KongProtocol `json:"protocols,omitempty"`
	// ordering overrides the plugin's place in the execution order (Kong Enterprise).
	// +optional
	Ordering *PluginOrdering `json:"ordering,omitempty"`

	Status KongPluginStatus `json:"status,omitempty"`
}

// KongPluginList is a list of KongPlugins.
// +kubebuilder:object:root=true
type KongPluginList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KongPlugin `json:"items"`
}
