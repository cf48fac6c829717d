//go:build chaos_skip_lookup

package entity

// skipLookupBeforeCreate: a mutation for test/chaos/konnect only (go build -tags chaos_skip_lookup). The operator
// then never looks an entity up by its k8s-uid tag before a create, as if exactly-once creates were broken.
const skipLookupBeforeCreate = true
