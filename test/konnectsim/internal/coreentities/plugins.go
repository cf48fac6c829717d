package coreentities

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/almproject/alm/test/konnectsim/internal/store"
)

// Plugins live in a control plane, global or scoped to a service, route, consumer or consumer group (any
// combination but consumer with consumer group), each of which must exist. Only one plugin of a name may have the
// same scope. Like Kong, Konnect knows the plugins it has: an unknown name is refused, and the configuration comes
// back with the plugin's defaults filled in (known here for a few plugins).

// pluginProtocols are the protocols a plugin may run on; pluginDefaultProtocols are those it runs on by default.
var (
	pluginProtocols        = []string{"grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss"}
	pluginDefaultProtocols = []any{"grpc", "grpcs", "http", "https"}
)

// pluginConfigDefaults are the configuration defaults of the plugins the simulator knows; any other name is
// refused as a plugin Konnect does not have.
var pluginConfigDefaults = map[string]func() object{
	"rate-limiting": func() object {
		return object{"policy": "local", "limit_by": "consumer", "fault_tolerant": true, "hide_client_headers": false,
			"error_code": int64(429), "error_message": "API rate limit exceeded", "sync_rate": int64(-1)}
	},
	"key-auth": func() object {
		return object{"key_names": []any{"apikey"}, "hide_credentials": false, "key_in_header": true, "key_in_query": true,
			"key_in_body": false, "run_on_preflight": true}
	},
	"basic-auth": func() object { return object{"hide_credentials": false} },
	"acl":        func() object { return object{"hide_groups_header": false} },
	"cors": func() object {
		return object{"credentials": false, "preflight_continue": false, "private_network": false}
	},
	"correlation-id": func() object {
		return object{"header_name": "Kong-Request-ID", "generator": "uuid#counter", "echo_downstream": false}
	},
	"request-transformer":  func() object { return object{} },
	"response-transformer": func() object { return object{} },
	"request-termination":  func() object { return object{"status_code": int64(503)} },
	"ip-restriction":       func() object { return object{} },
	"jwt":                  func() object { return object{"key_claim_name": "iss", "secret_is_base64": false} },
	"hmac-auth":            func() object { return object{"clock_skew": int64(300), "hide_credentials": false} },
	"prometheus":           func() object { return object{"per_consumer": false} },
	"proxy-cache":          func() object { return object{"strategy": "memory", "cache_ttl": int64(300)} },
	"http-log":             func() object { return object{"method": "POST", "timeout": int64(10000)} },
	"file-log":             func() object { return object{"reopen": false} },
	"aws-lambda":           func() object { return object{"timeout": int64(60000), "invocation_type": "RequestResponse"} },
	"openid-connect":       func() object { return object{} },
	"rate-limiting-advanced": func() object {
		return object{"strategy": "local", "identifier": "consumer", "window_type": "sliding"}
	},
}

// rateLimitingWindows are the windows of rate-limiting: at least one must be set.
var rateLimitingWindows = []string{"second", "minute", "hour", "day", "month", "year"}

var pluginSpec = &kindSpec{
	kind:  store.KindPlugin,
	label: "plugin",
	fields: map[string]fieldSpec{
		"id":             {kind: fString},
		"name":           {kind: fString},
		"instance_name":  {kind: fString},
		"config":         {kind: fObject},
		"enabled":        {kind: fBool},
		"protocols":      {kind: fStrings, enum: pluginProtocols},
		"ordering":       {kind: fObject},
		"condition":      {kind: fString},
		"tags":           tagsField,
		"service":        {kind: fObject},
		"route":          {kind: fObject},
		"consumer":       {kind: fObject},
		"consumer_group": {kind: fObject},
	},
	defaults: func() object {
		return object{"enabled": true, "protocols": slices.Clone(pluginDefaultProtocols), "config": object{}}
	},
	unique: []string{"instance_name"},
	refs: map[string]store.Kind{
		"service": store.KindService, "route": store.KindRoute, "consumer": store.KindConsumer, "consumer_group": store.KindConsumerGroup,
	},
	check:     checkPlugin,
	uniqueKey: pluginScopeKey,
}

// checkPlugin refuses an unknown plugin, a consumer with a consumer group, and a rate-limiting without a window;
// it fills in the configuration's defaults.
func checkPlugin(obj object) []errorDetail {
	name := store.Str(obj["name"])
	if name == "" {
		return []errorDetail{entityError("missing properties: 'name'")}
	}
	defaults, known := pluginConfigDefaults[name]
	if !known {
		return []errorDetail{fieldError("name", "plugin '%s' not enabled; add it to the 'plugins' configuration property", name)}
	}
	var bad []errorDetail
	for _, field := range []string{"service", "route", "consumer", "consumer_group"} {
		if ref, ok := obj[field].(map[string]any); ok && store.Str(ref["id"]) == "" {
			bad = append(bad, fieldError(field+".id", "missing properties: 'id'"))
		}
	}
	if obj["consumer"] != nil && obj["consumer_group"] != nil {
		bad = append(bad, entityError("only one of 'consumer' and 'consumer_group' may be set"))
	}
	config, _ := obj["config"].(map[string]any)
	if name == "rate-limiting" && !slices.ContainsFunc(rateLimitingWindows, func(w string) bool { return config[w] != nil }) {
		bad = append(bad, entityError("at least one of these fields must be non-empty: %s", quoteAll(prefixed("config.", rateLimitingWindows))))
	}
	if len(bad) > 0 {
		return bad
	}
	filled := defaults()
	maps.Copy(filled, config)
	obj["config"] = filled
	return nil
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// pluginScopeKey is what makes a plugin unique: its name and the IDs of what it is scoped to.
func pluginScopeKey(obj object) (string, string) {
	parts := []string{"name=" + store.Str(obj["name"])}
	for _, field := range []string{"consumer", "consumer_group", "route", "service"} {
		id := store.ParentOf(obj, field)
		if id == "" {
			id = "null"
		}
		parts = append(parts, field+"="+id)
	}
	key := strings.Join(parts, ",")
	return key, fmt.Sprintf("{%s}", key)
}

var consumerGroupSpec = &kindSpec{
	kind:  store.KindConsumerGroup,
	label: "consumer_group",
	fields: map[string]fieldSpec{
		"id":   {kind: fString},
		"name": {kind: fString},
		"tags": tagsField,
	},
	defaults: func() object { return object{} },
	unique:   []string{"name"},
	check: func(obj object) []errorDetail {
		if store.Str(obj["name"]) == "" {
			return []errorDetail{entityError("missing properties: 'name'")}
		}
		return nil
	},
}
