package crdaccess

import (
	"context"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The watch's events keep what each version ships: a version created, its spec changed and deleted is reflected in
// the rules, and each event enqueues the one ClusterRole.
func TestShippedFollowsEvents(t *testing.T) {
	var s shipped
	h := s.handler()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ctx := context.Background()
	rules := func() []rbacv1.PolicyRule { return rulesFor(s.all(), nil) }
	want := func(groups ...string) []rbacv1.PolicyRule {
		out := []rbacv1.PolicyRule{}
		for _, g := range groups {
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{"widgets"}, Verbs: []string{"list"}})
		}
		return out
	}

	a, b := version(crd("a.example.com", "widgets")), version(crd("b.example.com", "widgets"))
	a.UID, b.UID = "uid-a", "uid-b"
	h.Create(ctx, event.CreateEvent{Object: &a}, q)
	h.Create(ctx, event.CreateEvent{Object: &b}, q)
	if got := rules(); !reflect.DeepEqual(got, want("a.example.com", "b.example.com")) {
		t.Errorf("after two versions were created, rules = %v", got)
	}
	changed := version(crd("c.example.com", "widgets"))
	changed.UID = "uid-a"
	h.Update(ctx, event.UpdateEvent{ObjectOld: &a, ObjectNew: &changed}, q)
	if got := rules(); !reflect.DeepEqual(got, want("b.example.com", "c.example.com")) {
		t.Errorf("after a version's spec changed, rules = %v", got)
	}
	h.Delete(ctx, event.DeleteEvent{Object: &b}, q)
	if got := rules(); !reflect.DeepEqual(got, want("c.example.com")) {
		t.Errorf("after a version was deleted, rules = %v, want only what the remaining one ships", got)
	}
	if q.Len() != 1 {
		t.Errorf("%d requests queued, want the one ClusterRole", q.Len())
	}
}
