// Package objectcache is the cache of the metadata of the objects ALM installed, which the Install, Upgrade and GC
// loops of one manager share: the installer reads an object there before it applies it, and adoption and GC query
// ownership there, at no read of the API server.
package objectcache

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/internal/outage"
)

var (
	objectCachesMu sync.Mutex
	objectCaches   = map[ctrl.Manager]client.Reader{}
)

// For returns mgr's cache of the metadata of the objects ALM installed (those labelled with a package,
// operators.alm.dev/app-type), shared by every loop of the manager and started with it. The installer reads an
// object there before it applies it, and the Upgrade and GC loops query ownership there, so that installing and
// collecting cost no reads of the API server. It holds metadata only, of ALM's objects only, without managedFields:
// little memory however many Secrets and ConfigMaps the cluster has. An object the cache does not know yet (it was
// created a moment ago) or not at all (someone else's) is read from the API server when creating it fails.
//
// Deployments are the exception: the manager's cache holds every Deployment already, for its readiness
// (loops.CacheOptions), so their metadata is read there, and held once (deploymentsFrom).
func For(mgr ctrl.Manager) (client.Reader, error) {
	objectCachesMu.Lock()
	defer objectCachesMu.Unlock()
	if c, ok := objectCaches[mgr]; ok {
		return c, nil
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(ours),
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
	r := deploymentsFrom{objects: c, deployments: mgr.GetCache()}
	objectCaches[mgr] = r
	return r, nil
}

var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

// deploymentsFrom reads the metadata of Deployments from the manager's cache (deployments), and that of every other
// kind from the cache of ALM's objects (objects), which so never holds Deployments: ALM keeps one copy of each
// Deployment's metadata, not two. It answers as the cache of ALM's objects would: a Deployment without ALM's label
// (operators.alm.dev/app-type) is not found, and is not listed.
type deploymentsFrom struct {
	objects, deployments client.Reader
}

func (r deploymentsFrom) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	meta, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || meta.GroupVersionKind() != deploymentGVK {
		return r.objects.Get(ctx, key, obj, opts...)
	}
	d := &appsv1.Deployment{}
	if err := r.deployments.Get(ctx, key, d, opts...); err != nil {
		return err
	}
	if _, ours := d.Labels[operatorsv1alpha1.LabelAppType]; !ours {
		return apierrors.NewNotFound(appsv1.Resource("deployments"), key.Name)
	}
	meta.ObjectMeta = d.ObjectMeta
	return nil
}

func (r deploymentsFrom) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	metas, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok || metas.GroupVersionKind() != deploymentGVK.GroupVersion().WithKind("DeploymentList") {
		return r.objects.List(ctx, list, opts...)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if o.LabelSelector == nil {
		o.LabelSelector = labels.Everything()
	}
	o.LabelSelector = o.LabelSelector.Add(ours)
	ds := &appsv1.DeploymentList{}
	if err := r.deployments.List(ctx, ds, o); err != nil {
		return err
	}
	metas.ResourceVersion, metas.Continue = ds.ResourceVersion, ds.Continue
	metas.Items = make([]metav1.PartialObjectMetadata, len(ds.Items))
	for i := range ds.Items {
		metas.Items[i] = metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: deploymentGVK.GroupVersion().String(),
			Kind: deploymentGVK.Kind}, ObjectMeta: ds.Items[i].ObjectMeta}
	}
	return nil
}

// ours selects the objects labelled with an AppType's package: those ALM installed.
var ours = func() labels.Requirement {
	req, err := labels.NewRequirement(operatorsv1alpha1.LabelAppType, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return *req
}()
