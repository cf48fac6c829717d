package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
)

// KonnectCloudGatewayTransitGateway is a transit gateway attached to a Dedicated Cloud Gateway network. Like its
// network it is provisioned by Konnect: Programmed only once Konnect reports it ready.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kong;konnect
// +kubebuilder:printcolumn:name="Programmed",type=string,JSONPath=`.status.conditions[?(@.type=='Programmed')].status`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="NetworkID",type=string,JSONPath=`.status.networkID`
// +kubebuilder:printcolumn:name="OrgID",type=string,JSONPath=`.status.organizationID`
type KonnectCloudGatewayTransitGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec KonnectCloudGatewayTransitGatewaySpec `json:"spec"`
	// +optional
	Status KonnectCloudGatewayTransitGatewayStatus `json:"status,omitempty"`
}

// KonnectCloudGatewayTransitGatewaySpec is the transit gateway and the network it belongs to.
// +kubebuilder:validation:XValidation:rule="self.networkRef.type == 'namespacedRef'",message="only namespacedRef is supported currently"
type KonnectCloudGatewayTransitGatewaySpec struct {
	KonnectTransitGatewayAPISpec `json:",inline"`
	// networkRef names the KonnectCloudGatewayNetwork the transit gateway is attached to.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="networkRef is immutable"
	NetworkRef ObjectRef `json:"networkRef"`
	// adopt takes a transit gateway that already exists on the network in Konnect over by its ID instead of
	// creating one (Kong's spec.adopt). Mode match takes it only if it equals the spec; override sets its
	// cidr_blocks (the only field Konnect's update-transit-gateway changes; the others must match either way). It
	// cannot change.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.adopt is immutable"
	Adopt *configurationv1alpha1.AdoptOptions `json:"adopt,omitempty"`
}

// TransitGatewayType is the kind of transit gateway.
type TransitGatewayType string

// Transit gateway types, as in Kong's operator.
const (
	TransitGatewayTypeAWSTransitGateway   TransitGatewayType = "AWSTransitGateway"
	TransitGatewayTypeAzureTransitGateway TransitGatewayType = "AzureTransitGateway"
)

// KonnectTransitGatewayAPISpec is Konnect's CreateTransitGatewayRequest for AWS and Azure transit gateways. Konnect's
// update-transit-gateway changes only an AWS transit gateway's cidr_blocks: every other field is immutable here.
// +kubebuilder:validation:XValidation:rule="self.type == oldSelf.type",message="spec.type is immutable"
// +kubebuilder:validation:XValidation:rule="self.type == 'AWSTransitGateway' ? has(self.awsTransitGateway) : !has(self.awsTransitGateway)",message="spec.awsTransitGateway must be set exactly when spec.type is AWSTransitGateway"
// +kubebuilder:validation:XValidation:rule="self.type == 'AzureTransitGateway' ? has(self.azureTransitGateway) : !has(self.azureTransitGateway)",message="spec.azureTransitGateway must be set exactly when spec.type is AzureTransitGateway"
type KonnectTransitGatewayAPISpec struct {
	// type of the transit gateway.
	// +required
	// +kubebuilder:validation:Enum=AWSTransitGateway;AzureTransitGateway
	Type TransitGatewayType `json:"type"`
	// awsTransitGateway, for type AWSTransitGateway.
	// +optional
	AWSTransitGateway *AWSTransitGateway `json:"awsTransitGateway,omitempty"`
	// azureTransitGateway, for type AzureTransitGateway. Konnect cannot change an Azure transit gateway: immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="azureTransitGateway is immutable: Konnect's update-transit-gateway cannot change an Azure transit gateway"
	AzureTransitGateway *AzureTransitGateway `json:"azureTransitGateway,omitempty"`
}

// AWSTransitGateway is an AWS transit gateway. Only cidr_blocks can change (update-transit-gateway).
// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="awsTransitGateway.name is immutable: Konnect's update-transit-gateway cannot rename a transit gateway"
// +kubebuilder:validation:XValidation:rule="self.attachment_config == oldSelf.attachment_config",message="awsTransitGateway.attachment_config is immutable: Konnect's update-transit-gateway cannot change it"
// +kubebuilder:validation:XValidation:rule="has(self.dns_config) == has(oldSelf.dns_config) && (!has(self.dns_config) || self.dns_config == oldSelf.dns_config)",message="awsTransitGateway.dns_config is immutable: Konnect's update-transit-gateway cannot change it"
type AWSTransitGateway struct {
	// name of the transit gateway.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=120
	Name string `json:"name"`
	// dns_config maps remote DNS server IP addresses to proxied internal domains.
	// +optional
	DNSConfig []TransitGatewayDNSConfig `json:"dns_config,omitempty"`
	// cidr_blocks of the route table for the transit gateway; a change is sent to Konnect (update-transit-gateway).
	// +required
	CIDRBlocks []string `json:"cidr_blocks"`
	// attachment_config attaches the AWS transit gateway.
	// +required
	AttachmentConfig AwsTransitGatewayAttachmentConfig `json:"attachment_config"`
}

// AzureTransitGateway is an Azure VNET peering gateway.
type AzureTransitGateway struct {
	// name of the transit gateway.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=120
	Name string `json:"name"`
	// dns_config maps remote DNS server IP addresses to proxied internal domains.
	// +optional
	DNSConfig []TransitGatewayDNSConfig `json:"dns_config,omitempty"`
	// attachment_config peers the Azure VNET.
	// +required
	AttachmentConfig AzureVNETPeeringAttachmentConfig `json:"attachment_config"`
}

// TransitGatewayDNSConfig maps remote DNS servers to domains.
type TransitGatewayDNSConfig struct {
	// remote_dns_server_ip_addresses of the DNS servers.
	// +optional
	RemoteDNSServerIPAddresses []string `json:"remote_dns_server_ip_addresses,omitempty"`
	// domain_proxy_list are the domains proxied to them.
	// +optional
	DomainProxyList []string `json:"domain_proxy_list,omitempty"`
}

// AwsTransitGatewayAttachmentConfig is the AWS side of the attachment.
type AwsTransitGatewayAttachmentConfig struct {
	// transit_gateway_id is the AWS transit gateway's ID.
	// +required
	TransitGatewayID string `json:"transit_gateway_id"`
	// ram_share_arn is the resource share's ARN.
	// +required
	RAMShareArn string `json:"ram_share_arn"`
}

// AzureVNETPeeringAttachmentConfig is the Azure side of the peering.
type AzureVNETPeeringAttachmentConfig struct {
	// tenant_id of the Azure tenant.
	// +required
	TenantID string `json:"tenant_id"`
	// subscription_id of the Azure subscription.
	// +required
	SubscriptionID string `json:"subscription_id"`
	// resource_group_name of the VNET.
	// +required
	ResourceGroupName string `json:"resource_group_name"`
	// vnet_name is the VNET's name.
	// +required
	VnetName string `json:"vnet_name"`
}

// KonnectCloudGatewayTransitGatewayStatus is the transit gateway's Konnect ID, network, organization, server and
// state.
type KonnectCloudGatewayTransitGatewayStatus struct {
	// conditions: Programmed (True once Konnect reports the transit gateway ready), NetworkRefValid.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	konnectv1alpha1.KonnectEntityStatus `json:",inline"`
	// networkID is the Konnect ID of the network.
	// +optional
	NetworkID   string `json:"networkID,omitempty"`
	StateStatus `json:",inline"`
}

// KonnectCloudGatewayTransitGatewayList is a list of KonnectCloudGatewayTransitGateway.
// +kubebuilder:object:root=true
type KonnectCloudGatewayTransitGatewayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KonnectCloudGatewayTransitGateway `json:"items"`
}

// GetAdoptOptions returns spec.adopt.
func (o *KonnectCloudGatewayTransitGateway) GetAdoptOptions() *configurationv1alpha1.AdoptOptions {
	return o.Spec.Adopt
}
