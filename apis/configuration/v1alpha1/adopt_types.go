package v1alpha1

// AdoptSource is where an entity to adopt lives.
// +kubebuilder:validation:Enum=konnect
type AdoptSource string

// AdoptSourceKonnect: the entity exists in Konnect.
const AdoptSourceKonnect AdoptSource = "konnect"

// AdoptMode says how an existing entity is taken over.
// +kubebuilder:validation:Enum=match;override
type AdoptMode string

// Adoption modes, as in Kong's operator.
const (
	// AdoptModeMatch takes the entity over only if it already equals the spec (its identity tags aside); otherwise
	// the object reports the fields that differ and nothing is written.
	AdoptModeMatch AdoptMode = "match"
	// AdoptModeOverride takes the entity over and makes it equal to the spec.
	AdoptModeOverride AdoptMode = "override"
)

// AdoptOptions takes an entity that already exists over instead of creating one: its ID stays, and from then on it
// is the object's like any other (updated, overwritten after out-of-band edits, deleted with the object).
// +kubebuilder:validation:XValidation:rule="self.from != 'konnect' || has(self.konnect)",message="konnect must be set when from is konnect"
type AdoptOptions struct {
	// from is where the entity lives: konnect.
	// +required
	From AdoptSource `json:"from"`
	// mode is match (take it over only if it equals the spec) or override (take it over and make it equal); default
	// override.
	// +optional
	// +kubebuilder:default=override
	Mode AdoptMode `json:"mode,omitempty"`
	// konnect names the entity in Konnect.
	// +optional
	Konnect *AdoptKonnectOptions `json:"konnect,omitempty"`
}

// AdoptKonnectOptions names the Konnect entity to adopt.
type AdoptKonnectOptions struct {
	// id is the entity's Konnect ID.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id"`
}
