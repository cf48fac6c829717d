package kinds

import "github.com/almproject/alm/controllers/konnect/kinds/kindbase"

// Index names of the references (the field indexes the watches use to find referrers).
const (
	indexServiceRef = "konnect.serviceRef"
	// IndexControlPlaneID finds a KonnectGatewayControlPlane by its Konnect ID.
	IndexControlPlaneID = kindbase.IndexControlPlaneID
	indexMembers        = "konnect.members"
	indexCredentials    = "konnect.credentials"
	indexPluginRef      = "konnect.pluginRef"
)
