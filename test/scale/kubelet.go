package scale

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/harness"
)

// kubelet plays the deployment controller and the kubelet: every Deployment whose spec is not rolled out yet is
// marked rolled out and Available as soon as its watch event arrives. It remembers when it marked the last one.
type kubelet struct {
	c    client.Client
	keys chan types.NamespacedName

	mu       sync.Mutex
	marked   int
	lastMark time.Time
}

// runKubelet starts marking Deployments; it stops when ctx ends.
func runKubelet(ctx context.Context, informers cache.Cache, c client.Client, workers int) (*kubelet, error) {
	k := &kubelet{c: c, keys: make(chan types.NamespacedName, 100000)}
	inf, err := informers.GetInformer(ctx, &appsv1.Deployment{})
	if err != nil {
		return nil, err
	}
	enqueue := func(obj any) {
		if d, ok := obj.(*appsv1.Deployment); ok && d.Status.ObservedGeneration < d.Generation {
			k.keys <- types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	for i := 0; i < workers; i++ {
		go k.work(ctx)
	}
	return k, nil
}

func (k *kubelet) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case key := <-k.keys:
			for ctx.Err() == nil {
				// A conflict (ALM updated the Deployment meanwhile) is retried with a fresh read.
				if err := harness.MarkDeploymentAvailable(ctx, k.c, key.Namespace, key.Name); err == nil || client.IgnoreNotFound(err) == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			k.mu.Lock()
			k.marked++
			k.lastMark = time.Now()
			k.mu.Unlock()
		}
	}
}

// last returns how many marks were made and when the last was.
func (k *kubelet) last() (int, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.marked, k.lastMark
}
