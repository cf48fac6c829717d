package entity

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// TagScheme is which identity tags (labels on control planes) the operator gives the entities it writes. Every
// scheme has the tags of IdentityTags (k8s-uid, k8s-kind, k8s-namespace, k8s-name); later schemes add keys, never
// remove or rename one, so that an operator of any scheme finds the entities of any other by their k8s-uid.
type TagScheme string

const (
	// TagSchemeV1 is the identity of IdentityTags and IdentityLabels (the default).
	TagSchemeV1 TagScheme = "v1"
	// TagSchemeV2 adds the object's API group and version (k8s-group, k8s-version), as Kong Gateway Operator tags
	// its entities: an entity says which API its object is of (e.g. configuration.konghq.com/v1alpha1), so that tools
	// filtering Konnect by Kong Gateway Operator's tags find it, and kinds of the same name in other groups never
	// match it.
	TagSchemeV2 TagScheme = "v2"
)

// TagSchemes are the schemes, oldest first.
var TagSchemes = []TagScheme{TagSchemeV1, TagSchemeV2}

// The identity keys TagSchemeV2 adds.
const (
	TagGroup   = "k8s-group"
	TagVersion = "k8s-version"
)

// Identity is the identity an operator gives the entities of one kind: the scheme, and the kind's API group and
// version (which TagSchemeV2 writes).
type Identity struct {
	Scheme         TagScheme
	Group, Version string
}

// CheckTagScheme says why s is not a scheme; nil when it is.
func CheckTagScheme(s TagScheme) error {
	if !slices.Contains(TagSchemes, s) {
		return fmt.Errorf("unknown tag scheme %q (want one of %v)", s, TagSchemes)
	}
	return nil
}

// extra is what the scheme adds to IdentityTags' keys, in a fixed order.
func (id Identity) extra() [][2]string {
	if id.Scheme != TagSchemeV2 {
		return nil
	}
	return [][2]string{{TagGroup, id.Group}, {TagVersion, id.Version}}
}

// Tags are every identity tag of obj in this scheme, "key:value".
func (id Identity) Tags(kind string, obj client.Object) []string {
	tags := IdentityTags(kind, obj, nil)
	for _, kv := range id.extra() {
		tags = append(tags, kv[0]+":"+kv[1])
	}
	return tags
}

// Labels are every identity label of obj in this scheme (control planes carry labels, not tags).
func (id Identity) Labels(kind string, obj client.Object) map[string]string {
	labels := IdentityLabels(kind, obj, nil)
	for _, kv := range id.extra() {
		labels[kv[0]] = LabelValue(kv[1])
	}
	return labels
}

// apply adds the scheme's extra identity to a body Kind.Desired made: to its tags, or to its labels (control
// planes). A body with neither (a mirror's) declares nothing and is left alone.
func (id Identity) apply(body map[string]any) {
	extra := id.extra()
	if len(extra) == 0 {
		return
	}
	if tags, ok := body["tags"].([]any); ok {
		for _, kv := range extra {
			if t := kv[0] + ":" + kv[1]; !slices.Contains(tags, any(t)) {
				tags = append(tags, t)
			}
		}
		body["tags"] = tags
	}
	if labels, ok := body["labels"].(map[string]any); ok {
		for _, kv := range extra {
			labels[kv[0]] = LabelValue(kv[1])
		}
	}
}

// IdentityOf is the identity of obj's kind in the scheme ("" is TagSchemeV1): its API group and version from the
// runtime scheme.
func IdentityOf(rs *runtime.Scheme, obj runtime.Object, scheme TagScheme) (Identity, error) {
	if scheme == "" {
		scheme = TagSchemeV1
	}
	if err := CheckTagScheme(scheme); err != nil {
		return Identity{}, err
	}
	gvk, err := apiutil.GVKForObject(obj, rs)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Scheme: scheme, Group: gvk.Group, Version: gvk.Version}, nil
}
