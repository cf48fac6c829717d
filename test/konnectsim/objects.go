package konnectsim

import "github.com/almproject/alm/test/konnectsim/internal/store"

// Kind names a kind of stored Konnect object.
type Kind = store.Kind

// The kinds the simulator stores.
const (
	KindControlPlane = store.KindControlPlane
	KindService      = store.KindService
	KindRoute        = store.KindRoute
	KindConsumer     = store.KindConsumer
	// Credentials of consumers.
	KindBasicAuth = store.KindBasicAuth
	KindKeyAuth   = store.KindKeyAuth
	KindACL       = store.KindACL
	KindJWT       = store.KindJWT
	KindHMACAuth  = store.KindHMACAuth
	// KindConsumerGroup and KindPlugin are consumer groups and plugins.
	KindConsumerGroup = store.KindConsumerGroup
	KindPlugin        = store.KindPlugin
	// Upstreams and targets, certificates, CA certificates and SNIs, keys and key sets, vaults, and data plane
	// client certificates.
	KindUpstream      = store.KindUpstream
	KindTarget        = store.KindTarget
	KindCertificate   = store.KindCertificate
	KindCACertificate = store.KindCACertificate
	KindSNI           = store.KindSNI
	KindKey           = store.KindKey
	KindKeySet        = store.KindKeySet
	KindVault         = store.KindVault
	KindDPCertificate = store.KindDPCertificate
)

// Object describes one stored Konnect object, for assertions such as "no
// duplicates" and "nothing orphaned".
type Object = store.Object

// ErrNotFound is returned by Edit, Remove and AddToken when no object (or organization) has the given ID.
var ErrNotFound = store.ErrNotFound

// Objects lists everything stored, in every organization: control planes
// first, each followed by its services, routes, consumers and credentials, in creation order.
func (s *Server) Objects() []Object { return s.st.Objects() }

// ObjectsOf lists the stored objects of one kind.
func (s *Server) ObjectsOf(kind Kind) []Object {
	var out []Object
	for _, o := range s.Objects() {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// Edit changes a stored object out of band, as a person in the Konnect UI
// would: every key of patch is set on the object (a nil value removes the
// field; "labels" and "tags" replace the whole value) and updated_at moves.
// The id and created_at cannot be changed. No validation or uniqueness check is made, so tests can also create states
// the API would refuse.
func (s *Server) Edit(id string, patch map[string]any) error { return s.st.Edit(id, patch) }

// Remove deletes a stored object out of band (as in the Konnect UI). Removing
// a control plane removes everything in it; removing a service removes its routes.
func (s *Server) Remove(id string) error { return s.st.Remove(id) }

// GroupMembers returns the member IDs of the control plane group groupID (nil if there is no such group).
func (s *Server) GroupMembers(groupID string) []string { return s.st.GroupMembers(groupID) }

// GroupConsumers returns the IDs of the consumers in the consumer group groupID, sorted.
func (s *Server) GroupConsumers(groupID string) []string { return s.st.GroupConsumers(groupID) }
