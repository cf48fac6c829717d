// Package objectcache is the cache of the metadata of the objects ALM installed, which the Install, Upgrade and GC
// loops of one manager share: the installer reads an object there before it applies it, and adoption and GC query
// ownership there, at no read of the API server.
package objectcache

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/internal/outage"
)

var (
	objectCachesMu sync.Mutex
	objectCaches   = map[ctrl.Manager]cache.Cache{}
)

// For returns mgr's cache of the metadata of the objects ALM installed (those labelled with a package,
// operators.alm.dev/app-type), shared by every loop of the manager and started with it. The installer reads an
// object there before it applies it, and the Upgrade and GC loops query ownership there, so that installing and
// collecting cost no reads of the API server. It holds metadata only, of ALM's objects only, without managedFields:
// little memory however many Secrets and ConfigMaps the cluster has. An object the cache does not know yet (it was
// created a moment ago) or not at all (someone else's) is read from the API server when creating it fails.
func For(mgr ctrl.Manager) (cache.Cache, error) {
	objectCachesMu.Lock()
	defer objectCachesMu.Unlock()
	if c, ok := objectCaches[mgr]; ok {
		return c, nil
	}
	req, err := labels.NewRequirement(operatorsv1alpha1.LabelAppType, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(*req),
		DefaultTransform:     objectsTransform(), // no managedFields; shared strings held once; hashes apart
		NewInformer:          outage.NewInformer, // resumes within seconds after an API server restart
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	// Forget the cache when the manager stops (tests run many managers in one process).
	forget := manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		objectCachesMu.Lock()
		defer objectCachesMu.Unlock()
		delete(objectCaches, mgr)
		return nil
	})
	if err := mgr.Add(forget); err != nil {
		return nil, err
	}
	objectCaches[mgr] = c
	return c, nil
}
