package konnectsim

// Knobs of the Dedicated Cloud Gateway networks' provisioning (internal/cloudgateways): it advances on reads, so
// tests decide when a network is ready without waiting for a clock.

// SetNetworkReadsToReady sets how many GETs see a new network initializing before it is ready (default 2; < 1:
// ready at the first GET).
func (s *Server) SetNetworkReadsToReady(n int) { s.cloud.SetReadsToReady(n) }

// FailNetwork makes the provisioning of networks named name fail with reason: the network goes offline with
// state_metadata {reported_status: INVALID, reason} where it would have become ready.
func (s *Server) FailNetwork(name, reason string) { s.cloud.FailNetwork(name, reason) }

// Networks returns the IDs of the cloud gateway networks of organization orgID.
func (s *Server) Networks(orgID string) []string { return s.cloud.NetworkIDs(orgID) }

// TransitGateways returns the IDs of the transit gateways of every network of organization orgID.
func (s *Server) TransitGateways(orgID string) []string { return s.cloud.TransitGatewayIDs(orgID) }

// DataPlaneGroups returns how many data plane groups the cloud gateway configuration of control plane cpID has (-1:
// it has no configuration).
func (s *Server) DataPlaneGroups(orgID, cpID string) int { return s.cloud.DataPlaneGroups(orgID, cpID) }

// CloudGatewayEntity returns a copy of the network or transit gateway id of organization orgID as Konnect holds it
// (nil: none).
func (s *Server) CloudGatewayEntity(orgID, id string) map[string]any {
	return s.cloud.Entity(orgID, id)
}

// EditCloudGatewayEntity sets fields of the network or transit gateway id of organization orgID, as an edit made in
// Konnect (false: no such entity).
func (s *Server) EditCloudGatewayEntity(orgID, id string, fields map[string]any) bool {
	return s.cloud.Edit(orgID, id, fields)
}
