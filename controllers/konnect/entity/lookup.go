//go:build !chaos_skip_lookup

package entity

// skipLookupBeforeCreate is false in every build but the chaos mutation's (build tag chaos_skip_lookup, see
// lookup_mutation.go): test/chaos/konnect builds the operator with it to show that its duplicate check fails when a
// create is sent without first looking for the entity of an earlier attempt by its k8s-uid tag.
const skipLookupBeforeCreate = false
