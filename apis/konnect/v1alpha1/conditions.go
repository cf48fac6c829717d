package v1alpha1

// Condition types used by every Konnect kind (konnect.konghq.com and configuration.konghq.com).
const (
	// ConditionProgrammed is True when the object exists in Konnect as declared.
	ConditionProgrammed = "Programmed"
	// ConditionAPIAuthValid is True when a KonnectAPIAuthConfiguration's token was accepted by Konnect.
	ConditionAPIAuthValid = "APIAuthValid"
	// ConditionAPIAuthRefValid is True when the KonnectAPIAuthConfiguration an object uses exists and is valid.
	ConditionAPIAuthRefValid = "APIAuthRefValid"
	// ConditionControlPlaneRefValid is True when the referenced KonnectGatewayControlPlane exists and is Programmed.
	ConditionControlPlaneRefValid = "ControlPlaneRefValid"
	// ConditionKongServiceRefValid is True when a KongRoute's KongService exists and is Programmed.
	ConditionKongServiceRefValid = "KongServiceRefValid"
	// ConditionMembersRefValid is True when every member of a control plane group exists in Konnect.
	ConditionMembersRefValid = "MembersRefValid"
	// ConditionCredentialsValid is True when every credential Secret of a KongConsumer exists and is usable.
	ConditionCredentialsValid = "CredentialsValid"
	// ConditionKongConsumerGroupRefsValid is True when every KongConsumerGroup a KongConsumer names exists in Konnect
	// in the consumer's control plane.
	ConditionKongConsumerGroupRefsValid = "KongConsumerGroupRefsValid"
)

// Condition reasons.
const (
	// ReasonProgrammed: the Konnect entity was created or updated as declared.
	ReasonProgrammed = "Programmed"
	// ReasonPending: nothing was sent to Konnect yet.
	ReasonPending = "Pending"
	// ReasonCreateFailed: Konnect refused or did not answer the create call.
	ReasonCreateFailed = "CreateFailed"
	// ReasonUpdateFailed: Konnect refused or did not answer the update call.
	ReasonUpdateFailed = "UpdateFailed"
	// ReasonAdoptionFailed: the entity spec.adopt names could not be taken over (it does not exist, or Konnect refused
	// or did not answer).
	ReasonAdoptionFailed = "AdoptionFailed"
	// ReasonAdoptionMismatch: spec.adopt's mode is match and the entity differs from the spec in the fields the
	// message names; nothing was written.
	ReasonAdoptionMismatch = "AdoptionMismatch"
	// ReasonEntityClaimed: the entity Konnect holds for what the object declares (found by its content, for a type on
	// which Konnect keeps no tags, e.g. a data plane client certificate by its PEM) belongs to another object; it
	// was not adopted and nothing was written to Konnect.
	ReasonEntityClaimed = "EntityClaimed"
	// ReasonDeleteFailed: Konnect refused or did not answer the delete call; the finalizer stays.
	ReasonDeleteFailed = "DeleteFailed"
	// ReasonInvalidReference: a referenced object is missing, not ready or not usable; no Konnect call was made.
	ReasonInvalidReference = "InvalidReference"
	// ReasonRefNotPermitted: the reference names an object in another namespace and no KongReferenceGrant there
	// allows it; no Konnect call was made.
	ReasonRefNotPermitted = "RefNotPermitted"
	// ReasonValid: the token or reference is valid.
	ReasonValid = "Valid"
	// ReasonInvalid: Konnect rejected the token (401/403).
	ReasonInvalid = "Invalid"
	// ReasonInvalidSpec: the object cannot be used as written (e.g. its Secret lacks the token key).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonDeleting: the object is being deleted and waits for what depends on it.
	ReasonDeleting = "Deleting"
	// ReasonNotFound: the mirrored control plane does not exist in Konnect.
	ReasonNotFound = "NotFound"
	// ReasonUnsupported: the object uses a feature this operator does not synchronise.
	ReasonUnsupported = "Unsupported"
	// ReasonUnreachable: Konnect could not be reached to check the token; it is retried with backoff.
	ReasonUnreachable = "Unreachable"
)

// Condition types of plugin bindings and consumer groups.
const (
	// ConditionKongPluginRefValid is True when a KongPluginBinding's KongPlugin exists and its configuration is usable.
	ConditionKongPluginRefValid = "KongPluginRefValid"
	// ConditionKongRouteRefValid is True when a KongPluginBinding's KongRoute exists in Konnect.
	ConditionKongRouteRefValid = "KongRouteRefValid"
	// ConditionKongConsumerRefValid is True when a KongPluginBinding's KongConsumer exists in Konnect.
	ConditionKongConsumerRefValid = "KongConsumerRefValid"
	// ConditionKongConsumerGroupRefValid is True when a KongPluginBinding's KongConsumerGroup exists in Konnect.
	ConditionKongConsumerGroupRefValid = "KongConsumerGroupRefValid"
)

// Condition types of upstreams, certificates and keys.
const (
	// ConditionKongUpstreamRefValid is True when a KongTarget's KongUpstream exists in Konnect.
	ConditionKongUpstreamRefValid = "KongUpstreamRefValid"
	// ConditionKongCertificateRefValid is True when a KongSNI's KongCertificate exists in Konnect (or the client
	// certificate of a KongService or KongUpstream does, in its control plane).
	ConditionKongCertificateRefValid = "KongCertificateRefValid"
	// ConditionKongCACertificateRefsValid is True when every KongCACertificate a KongService names exists in
	// Konnect in the service's control plane.
	ConditionKongCACertificateRefsValid = "KongCACertificateRefsValid"
	// ConditionKeySetRefValid is True when a KongKey's KongKeySet exists in Konnect (or the key is in no set).
	ConditionKeySetRefValid = "KeySetRefValid"
	// ConditionSecretRefValid is True when the Secret a certificate reads its PEM data from exists and has the keys.
	ConditionSecretRefValid = "SecretRefValid"
)
