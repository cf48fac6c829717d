package entity

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		want Action
	}{
		{"not created: create", Facts{Mode: DriftModeList}, ActionCreate},
		{"not created, sync due: still create", Facts{SyncDue: true, Mode: DriftModeUpdate}, ActionCreate},
		{"spec, labels or annotations changed: update now", Facts{HasID: true, Changed: true, Mode: DriftModeList}, ActionUpdate},
		{"unchanged, before the sync period: wait", Facts{HasID: true, Mode: DriftModeUpdate}, ActionWait},
		{"unchanged, sync period passed, per-object mode: update", Facts{HasID: true, SyncDue: true, Mode: DriftModeUpdate}, ActionUpdate},
		{"unchanged, sync period passed, list mode, no drift: wait", Facts{HasID: true, SyncDue: true, Mode: DriftModeList}, ActionWait},
		{"drift found by the list: update", Facts{HasID: true, Drifted: true, Mode: DriftModeList}, ActionUpdate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.f); got != tc.want {
				t.Errorf("Decide(%+v) = %s, want %s", tc.f, got, tc.want)
			}
		})
	}
}

func TestSyncDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, tc := range []struct {
		name          string
		last          *time.Time
		wantDue       bool
		wantRemaining time.Duration
	}{
		{"never synced", nil, true, time.Minute},
		{"synced 10s ago", at(-10 * time.Second), false, 50 * time.Second},
		{"synced exactly a period ago", at(-time.Minute), true, time.Minute},
		{"synced long ago", at(-time.Hour), true, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			due, remaining := syncDue(tc.last, now, time.Minute)
			if due != tc.wantDue || remaining != tc.wantRemaining {
				t.Errorf("syncDue = %v, %s; want %v, %s", due, remaining, tc.wantDue, tc.wantRemaining)
			}
		})
	}
}

func TestStateHash(t *testing.T) {
	svc := func(mut func(*configurationv1alpha1.KongService)) *configurationv1alpha1.KongService {
		s := &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "u"}}
		mut(s)
		return s
	}
	body := map[string]any{"host": "a"}
	base := StateHash(svc(func(*configurationv1alpha1.KongService) {}), "cp", body, nil)
	for _, tc := range []struct {
		name string
		hash string
	}{
		{"label added", StateHash(svc(func(s *configurationv1alpha1.KongService) { s.Labels = map[string]string{"a": "b"} }), "cp", body, nil)},
		{"annotation added", StateHash(svc(func(s *configurationv1alpha1.KongService) { s.Annotations = map[string]string{"a": "b"} }), "cp", body, nil)},
		{"body changed", StateHash(svc(func(*configurationv1alpha1.KongService) {}), "cp", map[string]any{"host": "b"}, nil)},
		{"control plane changed", StateHash(svc(func(*configurationv1alpha1.KongService) {}), "cp2", body, nil)},
		{"parts changed", StateHash(svc(func(*configurationv1alpha1.KongService) {}), "cp", body, []string{"member"})},
	} {
		if tc.hash == base {
			t.Errorf("%s: hash did not change", tc.name)
		}
	}
	again := StateHash(svc(func(s *configurationv1alpha1.KongService) {
		s.Status.Konnect = &configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef{ControlPlaneID: "x"}
	}), "cp", body, nil)
	if again != base {
		t.Error("a status change must not change the hash")
	}
}

func TestIdentityTags(t *testing.T) {
	obj := &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "team-a", UID: types.UID("1234")}}
	got := IdentityTags("KongService", obj, []string{"env:prod", "env:prod"})
	want := []string{"env:prod", "k8s-uid:1234", "k8s-kind:KongService", "k8s-namespace:team-a", "k8s-name:svc"}
	if len(got) != len(want) {
		t.Fatalf("IdentityTags = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("IdentityTags = %v, want %v", got, want)
		}
	}
	long := &configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: string(make([]byte, 200)), UID: "u"}}
	for _, tag := range IdentityTags("KongService", long, nil) {
		if len(tag) > maxTagLen {
			t.Errorf("tag of %d characters, Konnect allows %d", len(tag), maxTagLen)
		}
	}
	labels := IdentityLabels("KonnectGatewayControlPlane", obj, map[string]string{"app": "x", "k8s-uid": "forged"})
	if labels["k8s-uid"] != "1234" || labels["app"] != "x" || labels["k8s-kind"] != "KonnectGatewayControlPlane" {
		t.Errorf("IdentityLabels = %v", labels)
	}
}
