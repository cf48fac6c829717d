package entity

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/bodydiff"
)

func tagsOf(s ...string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestTagSchemes: v2 is v1 plus k8s-group and k8s-version, on tags and on control plane labels; a mirror's empty
// body gets nothing.
func TestTagSchemes(t *testing.T) {
	svc := &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "ns", UID: types.UID("u1")}}
	v1 := Identity{Scheme: TagSchemeV1, Group: "configuration.konghq.com", Version: "v1alpha1"}
	v2 := v1
	v2.Scheme = TagSchemeV2
	if got := fmt.Sprint(v1.Tags("KongService", svc)); got != "[k8s-uid:u1 k8s-kind:KongService k8s-namespace:ns k8s-name:echo]" {
		t.Errorf("v1 tags = %s", got)
	}
	want := "[k8s-uid:u1 k8s-kind:KongService k8s-namespace:ns k8s-name:echo k8s-group:configuration.konghq.com k8s-version:v1alpha1]"
	if got := fmt.Sprint(v2.Tags("KongService", svc)); got != want {
		t.Errorf("v2 tags = %s, want %s", got, want)
	}
	body := map[string]any{"tags": tagsOf("mine", "k8s-uid:u1")}
	v2.apply(body)
	if got := fmt.Sprint(body["tags"]); got != "[mine k8s-uid:u1 k8s-group:configuration.konghq.com k8s-version:v1alpha1]" {
		t.Errorf("v2 applied to tags = %s", got)
	}
	labels := map[string]any{"labels": map[string]any{"k8s-uid": "u1"}}
	v2.apply(labels)
	if got := fmt.Sprint(labels["labels"]); got != "map[k8s-group:configuration.konghq.com k8s-uid:u1 k8s-version:v1alpha1]" {
		t.Errorf("v2 applied to labels = %s", got)
	}
	mirror := map[string]any{}
	v2.apply(mirror)
	if len(mirror) != 0 {
		t.Errorf("v2 applied to a mirror's body = %v, want nothing", mirror)
	}
	if CheckTagScheme("v3") == nil || CheckTagScheme(TagSchemeV2) != nil {
		t.Error("CheckTagScheme accepts v3 or refuses v2")
	}
}

// TestForeignIdentityIsNotDrift: an operator of scheme v1 sees an entity re-tagged to v2 (identity keys it does not
// write) as in its declared state, and an update it makes for other drift keeps those tags; a user's tag added out
// of band, or one of its own identity tags changed, is still drift.
func TestForeignIdentityIsNotDrift(t *testing.T) {
	v1Tags := tagsOf("user", "k8s-uid:u1", "k8s-kind:KongService")
	desired := map[string]any{"host": "a", "tags": v1Tags}
	retagged := map[string]any{"host": "a", "tags": tagsOf("user", "k8s-uid:u1", "k8s-kind:KongService", "k8s-group:g", "k8s-version:v")}
	if bodydiff.Drifted(desired, retagged, nil) {
		t.Error("an entity with another scheme's identity tags is drift for a v1 operator: the two versions would flip-flop")
	}
	for name, actual := range map[string]map[string]any{
		"user tag added":        {"host": "a", "tags": tagsOf("user", "other", "k8s-uid:u1", "k8s-kind:KongService")},
		"own identity changed":  {"host": "a", "tags": tagsOf("user", "k8s-uid:u2", "k8s-kind:KongService")},
		"own identity removed":  {"host": "a", "tags": tagsOf("user", "k8s-uid:u1")},
		"field changed, v2 tag": {"host": "b", "tags": tagsOf("user", "k8s-uid:u1", "k8s-kind:KongService", "k8s-group:g")},
	} {
		if !bodydiff.Drifted(desired, actual, nil) {
			t.Errorf("%s: not drift", name)
		}
	}
	body := bodydiff.KeepForeignIdentity(desired, map[string]any{"host": "b", "tags": retagged["tags"]})
	if got := fmt.Sprint(body["tags"]); got != "[user k8s-uid:u1 k8s-kind:KongService k8s-group:g k8s-version:v]" || body["host"] != "a" {
		t.Errorf("update for drift = %v, want the desired body with the v2 tags kept", body)
	}
	if fmt.Sprint(desired["tags"]) != fmt.Sprint(v1Tags) {
		t.Errorf("keepForeignIdentity changed the desired body: %v", desired["tags"])
	}

	cpDesired := map[string]any{"name": "cp", "labels": map[string]any{"k8s-uid": "u1", "team": "a"}}
	cpActual := map[string]any{"name": "cp", "labels": map[string]any{"k8s-uid": "u1", "team": "a", "k8s-group": "g"}}
	if bodydiff.Drifted(cpDesired, cpActual, nil) {
		t.Error("a control plane with another scheme's identity label is drift")
	}
	if got := fmt.Sprint(bodydiff.KeepForeignIdentity(cpDesired, cpActual)["labels"]); got != "map[k8s-group:g k8s-uid:u1 team:a]" {
		t.Errorf("control plane update for drift: labels %s", got)
	}
	cpActual["labels"].(map[string]any)["team"] = "b"
	if !bodydiff.Drifted(cpDesired, cpActual, nil) {
		t.Error("a user label changed out of band is not drift")
	}
}
