package konnectsim

import (
	"net/http"
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

	// Members of a control plane group.
	PathGroupMemberships       = PathControlPlane + "/group-memberships"
	PathGroupMembershipsAdd    = PathGroupMemberships + "/add"
	PathGroupMembershipsRemove = PathGroupMemberships + "/remove"
	PathGroupMemberStatus      = PathControlPlane + "/group-member-status"
	PathGroupStatus            = PathControlPlane + "/group-status"
)

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()

	s.handle(mux, "GET "+PathOrganizationsMe, platformAPI, s.getOrganizationsMe)

	s.handle(mux, "GET "+PathControlPlanes, platformAPI, s.listControlPlanes)
	s.handle(mux, "POST "+PathControlPlanes, platformAPI, s.createControlPlane)
	s.handle(mux, "GET "+PathControlPlane, platformAPI, s.getControlPlane)
	s.handle(mux, "PATCH "+PathControlPlane, platformAPI, s.updateControlPlane)
	s.handle(mux, "DELETE "+PathControlPlane, platformAPI, s.deleteControlPlane)
	s.handle(mux, "GET "+PathGroupMemberships, platformAPI, s.listGroupMembers)
	s.handle(mux, "PUT "+PathGroupMemberships, platformAPI, s.putGroupMembers)
	s.handle(mux, "POST "+PathGroupMembershipsAdd, platformAPI, s.addGroupMembers)
	s.handle(mux, "POST "+PathGroupMembershipsRemove, platformAPI, s.removeGroupMembers)
	s.handle(mux, "GET "+PathGroupMemberStatus, platformAPI, s.groupMemberStatus)
	s.handle(mux, "GET "+PathGroupStatus, platformAPI, s.groupStatus)

	for _, c := range []struct {
		spec        *kindSpec
		list, one   string
		idVar       string
		parentIDVar string // for entities nested under another (routes of a service, credentials of a consumer)
		readOnly    bool   // GET only
	}{
		{spec: serviceSpec, list: PathServices, one: PathService, idVar: "serviceId"},
		{spec: routeSpec, list: PathRoutes, one: PathRoute, idVar: "routeId"},
		{spec: consumerSpec, list: PathConsumers, one: PathConsumer, idVar: "consumerId"},
		{spec: routeSpec, list: PathServiceRoutes, one: PathServiceRoute, idVar: "routeId", parentIDVar: "serviceId"},
		{spec: basicAuthSpec, list: PathConsumerBasicAuth, one: PathConsumerBasicAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
		{spec: keyAuthSpec, list: PathConsumerKeyAuth, one: PathConsumerKeyAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
		{spec: aclSpec, list: PathConsumerACLs, one: PathConsumerACLCredential, idVar: "credentialId", parentIDVar: "consumerId"},
		{spec: jwtSpec, list: PathConsumerJWT, one: PathConsumerJWTCredential, idVar: "credentialId", parentIDVar: "consumerId"},
		{spec: hmacAuthSpec, list: PathConsumerHMACAuth, one: PathConsumerHMACAuthCredential, idVar: "credentialId", parentIDVar: "consumerId"},
		{spec: basicAuthSpec, list: PathBasicAuths, one: PathBasicAuth, idVar: "credentialId", readOnly: true},
		{spec: keyAuthSpec, list: PathKeyAuths, one: PathKeyAuth, idVar: "credentialId", readOnly: true},
		{spec: aclSpec, list: PathACLs, one: PathACL, idVar: "credentialId", readOnly: true},
		{spec: jwtSpec, list: PathJWTs, one: PathJWT, idVar: "credentialId", readOnly: true},
		{spec: hmacAuthSpec, list: PathHMACAuths, one: PathHMACAuth, idVar: "credentialId", readOnly: true},
	} {
		h := &coreHandler{s: s, spec: c.spec, idVar: c.idVar, parentIDVar: c.parentIDVar}
		s.handle(mux, "GET "+c.list, coreAPI, h.list)
		s.handle(mux, "GET "+c.one, coreAPI, h.get)
		if c.readOnly {
			continue
		}
		s.handle(mux, "POST "+c.list, coreAPI, h.create)
		s.handle(mux, "PUT "+c.one, coreAPI, h.upsert)
		s.handle(mux, "DELETE "+c.one, coreAPI, h.delete)
	}

	s.adminRoutes(mux)

	// Anything else: count it and answer like Konnect's gateway does.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counters[r.Method+" unmatched"]++
		s.total++
		s.mu.Unlock()
		s.logf("konnectsim: %s %s (no such endpoint)", r.Method, r.URL.RequestURI())
		writeJSON(w, http.StatusNotFound, "application/json", map[string]any{
			"message": "no Route matched with those values",
		})
	})
	return mux
}

func (s *Server) getOrganizationsMe(w http.ResponseWriter, _ *http.Request, o *org) {
	writeJSON(w, http.StatusOK, "application/json", map[string]any{
		"id":                    o.id,
		"name":                  o.name,
		"owner_id":              o.id,
		"login_path":            "",
		"created_at":            formatTime(o.createdAt),
		"updated_at":            formatTime(o.createdAt),
		"state":                 "active",
		"retention_period_days": 30,
	})
}
