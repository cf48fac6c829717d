// Package kinds holds the Kubernetes kinds the Konnect operator syncs, each as an entity.Kind: how its object maps
// to a Konnect entity (references, body, status), and what only some kinds have (a control plane's mirror, what
// Konnect reports about it and its group members; a consumer's credentials). The kinds of upstreams, TLS material,
// keys and vaults live in packages of their own beside it (upstreams, tls, keys, vaults); what every kind is built
// on (control plane references, status, deletion scope) is in kindbase.
package kinds
