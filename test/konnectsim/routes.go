package konnectsim

import (
	"net/http"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Route templates of the simulated endpoints. Counter keys and FaultRule.Path
// use them: a counter key is "METHOD " + template, e.g.
// "POST " + PathServices.
const (
	PathOrganizationsMe = "/v3/organizations/me"
	PathControlPlanes   = "/v2/control-planes"
	PathControlPlane    = PathControlPlanes + "/{controlPlaneId}"
	PathServices        = PathControlPlane + "/core-entities/services"
	PathService         = PathServices + "/{serviceId}"
	PathServiceRoutes   = PathService + "/routes"
	PathServiceRoute    = PathServiceRoutes + "/{routeId}"
	PathRoutes          = PathControlPlane + "/core-entities/routes"
	PathRoute           = PathRoutes + "/{routeId}"
	PathConsumers       = PathControlPlane + "/core-entities/consumers"
	PathConsumer        = PathConsumers + "/{consumerId}"

	// Credentials of a consumer: the collections, then one credential of each.
	PathConsumerBasicAuth           = PathConsumer + "/basic-auth"
	PathConsumerKeyAuth             = PathConsumer + "/key-auth"
	PathConsumerACLs                = PathConsumer + "/acls"
	PathConsumerJWT                 = PathConsumer + "/jwt"
	PathConsumerHMACAuth            = PathConsumer + "/hmac-auth"
	PathConsumerBasicAuthCredential = PathConsumerBasicAuth + "/{credentialId}"
	PathConsumerKeyAuthCredential   = PathConsumerKeyAuth + "/{credentialId}"
	PathConsumerACLCredential       = PathConsumerACLs + "/{credentialId}"
	PathConsumerJWTCredential       = PathConsumerJWT + "/{credentialId}"
	PathConsumerHMACAuthCredential  = PathConsumerHMACAuth + "/{credentialId}"

	// Credentials of every consumer of a control plane (GET only).
	PathBasicAuths = PathControlPlane + "/core-entities/basic-auths"
	PathBasicAuth  = PathBasicAuths + "/{credentialId}"
	PathKeyAuths   = PathControlPlane + "/core-entities/key-auths"
	PathKeyAuth    = PathKeyAuths + "/{credentialId}"
	PathACLs       = PathControlPlane + "/core-entities/acls"
	PathACL        = PathACLs + "/{credentialId}"
	PathJWTs       = PathControlPlane + "/core-entities/jwts"
	PathJWT        = PathJWTs + "/{credentialId}"
	PathHMACAuths  = PathControlPlane + "/core-entities/hmac-auths"
	PathHMACAuth   = PathHMACAuths + "/{credentialId}"

	// Consumer groups, their members, and plugins.
	PathConsumerGroups         = PathControlPlane + "/core-entities/consumer_groups"
	PathConsumerGroup          = PathConsumerGroups + "/{consumerGroupId}"
	PathConsumerGroupConsumers = PathConsumerGroup + "/consumers"
	PathConsumerGroupConsumer  = PathConsumerGroupConsumers + "/{consumerId}"
	PathConsumerConsumerGroups = PathConsumer + "/consumer_groups"
	PathConsumerConsumerGroup  = PathConsumerConsumerGroups + "/{consumerGroupId}"
	PathPlugins                = PathControlPlane + "/core-entities/plugins"
	PathPlugin                 = PathPlugins + "/{pluginId}"

	// Upstreams and targets, certificates and their SNIs, CA certificates, keys and key sets, vaults.
	PathUpstreams       = PathControlPlane + "/core-entities/upstreams"
	PathUpstream        = PathUpstreams + "/{upstreamId}"
	PathUpstreamTargets = PathUpstream + "/targets"
	PathUpstreamTarget  = PathUpstreamTargets + "/{targetId}"
	PathTargets         = PathControlPlane + "/core-entities/targets"
	PathCertificates    = PathControlPlane + "/core-entities/certificates"
	PathCertificate     = PathCertificates + "/{certificateId}"
	PathCertificateSNIs = PathCertificate + "/snis"
	PathCertificateSNI  = PathCertificateSNIs + "/{sniId}"
	PathSNIs            = PathControlPlane + "/core-entities/snis"
	PathSNI             = PathSNIs + "/{sniId}"
	PathCACertificates  = PathControlPlane + "/core-entities/ca_certificates"
	PathCACertificate   = PathCACertificates + "/{caCertificateId}"
	PathKeySets         = PathControlPlane + "/core-entities/key-sets"
	PathKeySet          = PathKeySets + "/{keySetId}"
	PathKeySetKeys      = PathKeySet + "/keys"
	PathKeySetKey       = PathKeySetKeys + "/{keyId}"
	PathKeys            = PathControlPlane + "/core-entities/keys"
	PathKey             = PathKeys + "/{keyId}"
	PathVaults          = PathControlPlane + "/core-entities/vaults"
	PathVault           = PathVaults + "/{vaultId}"
	PathDPCertificates  = PathControlPlane + "/dp-client-certificates"
	PathDPCertificate   = PathDPCertificates + "/{certificateId}"

	// Dedicated Cloud Gateway networks.
	PathCloudGatewayNetworks = "/v2/cloud-gateways/networks"
	PathCloudGatewayNetwork  = PathCloudGatewayNetworks + "/{networkId}"
	// Transit gateways of a network, and data plane group configurations.
	PathCloudGatewayTransitGateways = PathCloudGatewayNetwork + "/transit-gateways"
	PathCloudGatewayTransitGateway  = PathCloudGatewayTransitGateways + "/{transitGatewayId}"
	PathCloudGatewayConfigurations  = "/v2/cloud-gateways/configurations"
	PathCloudGatewayConfiguration   = PathCloudGatewayConfigurations + "/{configurationId}"

	// Members of a control plane group.
	PathGroupMemberships       = PathControlPlane + "/group-memberships"
	PathGroupMembershipsAdd    = PathGroupMemberships + "/add"
	PathGroupMembershipsRemove = PathGroupMemberships + "/remove"
	PathGroupMemberStatus      = PathControlPlane + "/group-member-status"
	PathGroupStatus            = PathControlPlane + "/group-status"
)

// collectionRoute is one core entity collection served by a Collection: its list and item paths, the path
// variable of an entity's ID and, for entities nested under another, of the parent's.
type collectionRoute struct {
	kind        Kind
	list, one   string
	idVar       string
	parentIDVar string // for entities nested under another (routes of a service, credentials of a consumer)
	readOnly    bool   // GET only
}

// collectionRoutes are the core entity collections.
var collectionRoutes = []collectionRoute{
	{kind: KindService, list: PathServices, one: PathService, idVar: "serviceId"},
	{kind: KindRoute, list: PathRoutes, one: PathRoute, idVar: "routeId"},
	{kind: KindConsumer, list: PathConsumers, one: PathConsumer, idVar: "consumerId"},
	{kind: KindConsumerGroup, list: PathConsumerGroups, one: PathConsumerGroup, idVar: "consumerGroupId"},
	{kind: KindPlugin, list: PathPlugins, one: PathPlugin, idVar: "pluginId"},
	{kind: KindRoute, list: PathServiceRoutes, one: PathServiceRoute, idVar: "routeId", parentIDVar: "serviceId"},
	{kind: KindBasicAuth, list: PathConsumerBasicAuth, one: PathConsumerBasicAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
	{kind: KindKeyAuth, list: PathConsumerKeyAuth, one: PathConsumerKeyAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
	{kind: KindACL, list: PathConsumerACLs, one: PathConsumerACLCredential, idVar: "credentialId", parentIDVar: "consumerId"},
	{kind: KindJWT, list: PathConsumerJWT, one: PathConsumerJWTCredential, idVar: "credentialId", parentIDVar: "consumerId"},
	{kind: KindHMACAuth, list: PathConsumerHMACAuth, one: PathConsumerHMACAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
	{kind: KindUpstream, list: PathUpstreams, one: PathUpstream, idVar: "upstreamId"},
	{kind: KindTarget, list: PathUpstreamTargets, one: PathUpstreamTarget, idVar: "targetId", parentIDVar: "upstreamId"},
	{kind: KindCertificate, list: PathCertificates, one: PathCertificate, idVar: "certificateId"},
	{kind: KindSNI, list: PathSNIs, one: PathSNI, idVar: "sniId"},
	{kind: KindSNI, list: PathCertificateSNIs, one: PathCertificateSNI, idVar: "sniId", parentIDVar: "certificateId"},
	{kind: KindCACertificate, list: PathCACertificates, one: PathCACertificate, idVar: "caCertificateId"},
	{kind: KindKeySet, list: PathKeySets, one: PathKeySet, idVar: "keySetId"},
	{kind: KindKey, list: PathKeys, one: PathKey, idVar: "keyId"},
	{kind: KindKey, list: PathKeySetKeys, one: PathKeySetKey, idVar: "keyId", parentIDVar: "keySetId"},
	{kind: KindVault, list: PathVaults, one: PathVault, idVar: "vaultId"},
	{kind: KindBasicAuth, list: PathBasicAuths, one: PathBasicAuth, idVar: "credentialId", readOnly: true},
	{kind: KindKeyAuth, list: PathKeyAuths, one: PathKeyAuth, idVar: "credentialId", readOnly: true},
	{kind: KindACL, list: PathACLs, one: PathACL, idVar: "credentialId", readOnly: true},
	{kind: KindJWT, list: PathJWTs, one: PathJWT, idVar: "credentialId", readOnly: true},
	{kind: KindHMACAuth, list: PathHMACAuths, one: PathHMACAuth, idVar: "credentialId", readOnly: true},
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()

	s.handle(mux, "GET "+PathOrganizationsMe, platformAPI, s.platform.OrganizationsMe)

	s.handle(mux, "GET "+PathControlPlanes, platformAPI, s.platform.ListControlPlanes)
	s.handle(mux, "POST "+PathControlPlanes, platformAPI, s.platform.CreateControlPlane)
	s.handle(mux, "GET "+PathControlPlane, platformAPI, s.platform.GetControlPlane)
	s.handle(mux, "PATCH "+PathControlPlane, platformAPI, s.platform.UpdateControlPlane)
	s.handle(mux, "DELETE "+PathControlPlane, platformAPI, s.platform.DeleteControlPlane)
	s.handle(mux, "GET "+PathGroupMemberships, platformAPI, s.platform.ListGroupMembers)
	s.handle(mux, "PUT "+PathGroupMemberships, platformAPI, s.platform.PutGroupMembers)
	s.handle(mux, "POST "+PathGroupMembershipsAdd, platformAPI, s.platform.AddGroupMembers)
	s.handle(mux, "POST "+PathGroupMembershipsRemove, platformAPI, s.platform.RemoveGroupMembers)
	s.handle(mux, "GET "+PathGroupMemberStatus, platformAPI, s.platform.GroupMemberStatus)
	s.handle(mux, "GET "+PathGroupStatus, platformAPI, s.platform.GroupStatus)

	for _, c := range collectionRoutes {
		h := s.core.Collection(c.kind, c.idVar, c.parentIDVar)
		s.handle(mux, "GET "+c.list, coreAPI, h.List)
		s.handle(mux, "GET "+c.one, coreAPI, h.Get)
		if c.readOnly {
			continue
		}
		s.handle(mux, "POST "+c.list, coreAPI, h.Create)
		s.handle(mux, "PUT "+c.one, coreAPI, h.Upsert)
		s.handle(mux, "DELETE "+c.one, coreAPI, h.Delete)
	}

	// Every target of a control plane (GET only: a target is written through its upstream).
	s.handle(mux, "GET "+PathTargets, coreAPI, s.core.Collection(KindTarget, "targetId", "").List)

	s.dpCertificateRoutes(mux)

	s.handle(mux, "POST "+PathCloudGatewayNetworks, platformAPI, s.cloud.CreateNetwork)
	s.handle(mux, "GET "+PathCloudGatewayNetworks, platformAPI, s.cloud.ListNetworks)
	s.handle(mux, "GET "+PathCloudGatewayNetwork, platformAPI, s.cloud.GetNetwork)
	s.handle(mux, "PATCH "+PathCloudGatewayNetwork, platformAPI, s.cloud.UpdateNetwork)
	s.handle(mux, "DELETE "+PathCloudGatewayNetwork, platformAPI, s.cloud.DeleteNetwork)
	s.handle(mux, "POST "+PathCloudGatewayTransitGateways, platformAPI, s.cloud.CreateTransitGateway)
	s.handle(mux, "GET "+PathCloudGatewayTransitGateways, platformAPI, s.cloud.ListTransitGateways)
	s.handle(mux, "GET "+PathCloudGatewayTransitGateway, platformAPI, s.cloud.GetTransitGateway)
	s.handle(mux, "PATCH "+PathCloudGatewayTransitGateway, platformAPI, s.cloud.UpdateTransitGateway)
	s.handle(mux, "DELETE "+PathCloudGatewayTransitGateway, platformAPI, s.cloud.DeleteTransitGateway)
	s.handle(mux, "PUT "+PathCloudGatewayConfigurations, platformAPI, s.cloud.PutConfiguration)
	s.handle(mux, "GET "+PathCloudGatewayConfiguration, platformAPI, s.cloud.GetConfiguration)

	for _, m := range []struct {
		fromConsumer bool
		list, one    string
	}{
		{true, PathConsumerConsumerGroups, PathConsumerConsumerGroup},
		{false, PathConsumerGroupConsumers, PathConsumerGroupConsumer},
	} {
		h := s.core.Membership(m.fromConsumer)
		s.handle(mux, "GET "+m.list, coreAPI, h.List)
		s.handle(mux, "POST "+m.list, coreAPI, h.Add)
		s.handle(mux, "DELETE "+m.list, coreAPI, h.Remove)
		s.handle(mux, "DELETE "+m.one, coreAPI, h.Remove)
	}

	s.adminRoutes(mux)

	// Anything else: count it and answer like Konnect's gateway does.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counters[r.Method+" unmatched"]++
		s.total++
		s.mu.Unlock()
		s.logf("konnectsim: %s %s (no such endpoint)", r.Method, r.URL.RequestURI())
		store.WriteJSON(w, http.StatusNotFound, "application/json", map[string]any{
			"message": "no Route matched with those values",
		})
	})
	return mux
}

// dpCertificateRoutes serves the data plane client certificates of a control plane.
func (s *Server) dpCertificateRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET "+PathDPCertificates, legacyAPI, s.platform.ListDPCertificates)
	s.handle(mux, "POST "+PathDPCertificates, legacyAPI, s.platform.CreateDPCertificate)
	s.handle(mux, "GET "+PathDPCertificate, legacyAPI, s.platform.GetDPCertificate)
	s.handle(mux, "PUT "+PathDPCertificate, legacyAPI, s.platform.UpdateDPCertificate)
	s.handle(mux, "DELETE "+PathDPCertificate, legacyAPI, s.platform.DeleteDPCertificate)
}
