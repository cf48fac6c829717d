package entity

import (
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/controllers/konnect/bodydiff"
)

// Identity tag keys. Every Konnect entity the operator creates carries its Kubernetes identity, as tags
// "key:value" on gateway entities and as labels on control planes, so a create whose response was lost can be
// found and adopted instead of being created twice.
const (
	TagUID       = "k8s-uid"
	TagKind      = "k8s-kind"
	TagNamespace = "k8s-namespace"
	TagName      = "k8s-name"
)

// Konnect limits: a tag is at most 128 characters, a label value at most 63.
const (
	maxTagLen        = 128
	maxLabelValueLen = 63
)

// identity is the Kubernetes identity of an object as key/value pairs, in a fixed order.
func identity(kind string, obj client.Object) [][2]string {
	return [][2]string{
		{TagUID, string(obj.GetUID())},
		{TagKind, kind},
		{TagNamespace, obj.GetNamespace()},
		{TagName, obj.GetName()},
	}
}

// IdentityTags returns the user's tags followed by the identity tags, without duplicates.
func IdentityTags(kind string, obj client.Object, userTags []string) []string {
	tags := make([]string, 0, len(userTags)+4)
	for _, t := range userTags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	for _, kv := range identity(kind, obj) {
		t := kv[0] + ":" + kv[1]
		if len(t) > maxTagLen {
			t = t[:maxTagLen]
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// IdentityLabels returns the user's labels plus the identity labels (identity wins on a clash; the API forbids
// user keys starting with k8s). Label values that Konnect would reject are cut and trimmed.
func IdentityLabels(kind string, obj client.Object, userLabels map[string]string) map[string]string {
	labels := make(map[string]string, len(userLabels)+4)
	for k, v := range userLabels {
		labels[k] = v
	}
	for _, kv := range identity(kind, obj) {
		labels[kv[0]] = LabelValue(kv[1])
	}
	return labels
}

// LabelValue fits v in Konnect's label value rules: at most 63 characters, starting and ending alphanumeric.
func LabelValue(v string) string {
	if len(v) > maxLabelValueLen {
		v = v[:maxLabelValueLen]
	}
	return strings.Trim(v, "-._")
}

// UIDTag is the filter that finds the entity of one Kubernetes object.
func UIDTag(obj client.Object) string { return TagUID + ":" + string(obj.GetUID()) }

// kindTag is the filter that finds every entity of one Kubernetes kind.
func kindTag(kind string) string { return TagKind + ":" + kind }

// TagValue returns the value of the first "key:value" tag with the key.
func TagValue(tags any, key string) string {
	for _, t := range bodydiff.StringList(tags) {
		if v, ok := strings.CutPrefix(t, key+":"); ok {
			return v
		}
	}
	return ""
}
