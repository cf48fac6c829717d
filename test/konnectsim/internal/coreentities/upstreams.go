package coreentities

import (
	"slices"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Upstreams balance load over their targets; a target belongs to one upstream (which must exist) and its address
// is unique in it. Deleting an upstream deletes its targets. Vaults are named by their backend and unique by prefix.

var hashInputs = []string{"none", "consumer", "ip", "header", "cookie", "path", "query_arg", "uri_capture"}

var upstreamSpec = &kindSpec{
	kind:  store.KindUpstream,
	label: "upstream",
	fields: map[string]fieldSpec{
		"id":                          {kind: fString},
		"name":                        {kind: fString},
		"algorithm":                   {kind: fString, enum: []string{"round-robin", "consistent-hashing", "least-connections", "latency", "sticky-sessions"}},
		"client_certificate":          {kind: fObject},
		"hash_fallback":               {kind: fString, enum: hashInputs},
		"hash_fallback_header":        {kind: fString},
		"hash_fallback_query_arg":     {kind: fString},
		"hash_fallback_uri_capture":   {kind: fString},
		"hash_on":                     {kind: fString, enum: hashInputs},
		"hash_on_cookie":              {kind: fString},
		"hash_on_cookie_path":         {kind: fString},
		"hash_on_header":              {kind: fString},
		"hash_on_query_arg":           {kind: fString},
		"hash_on_uri_capture":         {kind: fString},
		"healthchecks":                {kind: fObject},
		"host_header":                 {kind: fString},
		"slots":                       {kind: fInt, min: 10, max: 65536},
		"tags":                        tagsField,
		"use_srv_name":                {kind: fBool},
		"sticky_sessions_cookie":      {kind: fString},
		"sticky_sessions_cookie_path": {kind: fString},
	},
	defaults: func() object {
		return object{"algorithm": "round-robin", "hash_on": "none", "hash_fallback": "none", "hash_on_cookie_path": "/",
			"slots": int64(10000), "use_srv_name": false}
	},
	unique: []string{"name"},
	refs:   map[string]store.Kind{"client_certificate": store.KindCertificate},
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		if store.Str(obj["name"]) == "" {
			bad = append(bad, entityError("missing properties: 'name'"))
		}
		for _, dep := range [][2]string{{"hash_on", "header"}, {"hash_on", "cookie"}, {"hash_on", "query_arg"}, {"hash_on", "uri_capture"}} {
			field := dep[0] + "_" + dep[1]
			if dep[1] == "cookie" {
				field = "hash_on_cookie"
			}
			if store.Str(obj[dep[0]]) == dep[1] && store.Str(obj[field]) == "" {
				bad = append(bad, entityError("failed conditional validation given value of field '%s'", dep[0]))
			}
		}
		return bad
	},
}

var targetSpec = &kindSpec{
	kind:  store.KindTarget,
	label: "target",
	fields: map[string]fieldSpec{
		"id":       {kind: fString},
		"target":   {kind: fString},
		"weight":   {kind: fInt, min: 0, max: 65535},
		"failover": {kind: fBool},
		"tags":     tagsField,
		"upstream": {kind: fObject},
	},
	defaults:        func() object { return object{"weight": int64(100), "failover": false} },
	parent:          "upstream",
	uniquePerParent: []string{"target"},
	refs:            map[string]store.Kind{"upstream": store.KindUpstream},
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		if store.Str(obj["target"]) == "" {
			bad = append(bad, entityError("missing properties: 'target'"))
		}
		if store.ParentOf(obj, "upstream") == "" {
			bad = append(bad, fieldError("upstream.id", "missing properties: 'id'"))
		}
		return bad
	},
}

// vaultBackends are the vault backends Konnect knows.
var vaultBackends = []string{"env", "aws", "gcp", "hcv", "azure", "konnect", "conjur"}

var vaultSpec = &kindSpec{
	kind:  store.KindVault,
	label: "vault",
	fields: map[string]fieldSpec{
		"id":          {kind: fString},
		"name":        {kind: fString},
		"prefix":      {kind: fString},
		"description": {kind: fString},
		"config":      {kind: fObject},
		"tags":        tagsField,
	},
	defaults: func() object { return object{"config": object{}} },
	unique:   []string{"prefix"},
	check: func(obj object) []errorDetail {
		var bad []errorDetail
		if !slices.Contains(vaultBackends, store.Str(obj["name"])) {
			bad = append(bad, fieldError("name", "vault '%s' is not installed", store.Str(obj["name"])))
		}
		if store.Str(obj["prefix"]) == "" {
			bad = append(bad, entityError("missing properties: 'prefix'"))
		}
		return bad
	},
}
