package crdaccess

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// shipped remembers, for every OperatorVersion the watch has reported, the CRDs its spec.objects ship. The watch's
// events keep it current (a version created, its spec changed, deleted), so a reconcile reads no OperatorVersion:
// listing ten thousand of them for each reconcile made this loop most of ALM's CPU and garbage. The controller
// starts its workers only once the handler has seen every version of the initial list.
type shipped struct {
	mu sync.Mutex
	// byVersion holds what each version that ships CRDs ships; count how many versions ship each CRD.
	byVersion map[types.UID][]groupResource
	count     map[groupResource]int
}

func (s *shipped) set(ov *operatorsv1alpha1.OperatorVersion) {
	grs := shippedBy(ov)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(ov.UID)
	if len(grs) == 0 {
		return
	}
	if s.byVersion == nil {
		s.byVersion, s.count = map[types.UID][]groupResource{}, map[groupResource]int{}
	}
	s.byVersion[ov.UID] = grs
	for _, gr := range grs {
		s.count[gr]++
	}
}

func (s *shipped) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(uid)
}

func (s *shipped) forgetLocked(uid types.UID) {
	for _, gr := range s.byVersion[uid] {
		if s.count[gr]--; s.count[gr] <= 0 {
			delete(s.count, gr)
		}
	}
	delete(s.byVersion, uid)
}

// all returns the CRDs some version ships, each once.
func (s *shipped) all() [][]groupResource {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]groupResource, 0, len(s.count))
	for gr := range s.count {
		out = append(out, gr)
	}
	return [][]groupResource{out}
}

// handler records each OperatorVersion event in s and enqueues the one ClusterRole.
func (s *shipped) handler() handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: ClusterRoleName}})
	}
	record := func(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if ov, ok := obj.(*operatorsv1alpha1.OperatorVersion); ok {
			s.set(ov)
		}
		enqueue(q)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			record(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			record(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			s.forget(e.Object.GetUID())
			enqueue(q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			record(e.Object, q)
		},
	}
}
