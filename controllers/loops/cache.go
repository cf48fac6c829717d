package loops

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/controllers/crdaccess"
	"github.com/almproject/alm/internal/outage"
	"github.com/almproject/alm/internal/slim"
)

// CacheOptions are the manager cache's options for ALM's loops: what the cache holds of each kind. cmd/alm runs
// with them, and integration tests that must see what ALM sees use them too. Only catalog ConfigMaps are read
// through this cache; the installer reads the metadata of what it applies from a cache of its own, of ALM's objects
// (objectcache.For), except that of Deployments, which this cache holds already.
func CacheOptions() cache.Options {
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: catalogLabelSelector()},
			// Only the namespaces a cluster admin trusts (the tenancy check reads this cache: a namespace it does
			// not hold is not trusted); a label set or removed applies with its watch event, at no request per install.
			&corev1.Namespace{}:  {Label: labels.SelectorFromSet(labels.Set{operatorsv1alpha1.LabelTrustedInstalls: "true"})},
			&appsv1.Deployment{}: {Transform: DeploymentReadiness},
			// The crdaccess loop reads its own ClusterRole; no loop reads others from this cache (the installer
			// reads what it applies from its own metadata cache), so the cluster's other ClusterRoles are not held.
			&rbacv1.ClusterRole{}: {Field: fields.OneTermEqualSelector("metadata.name", crdaccess.ClusterRoleName)},
		},
		// No loop reads managedFields; without them a thousand OperatorVersions and Deployments take far less memory.
		// The strings objects share (label keys, owners, namespaces, condition reasons) are held once (package slim).
		DefaultTransform: slim.Transform(),
		// Caches resume within seconds of the API server's return after it restarted, not after client-go's
		// reflector backoff of up to a minute (package outage).
		NewInformer: outage.NewInformer,
	}
}

// ClientOptions are the manager client's options: Secrets are never cached. A Secret read through the manager's
// client (a CatalogSource's pull Secret, a webhook's certificates) goes to the API server, so no read can start an
// informer that would hold every Secret of the cluster, with its data, in ALM's memory.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// DeploymentReadiness keeps of a Deployment in ALM's cache what its readiness is judged by (metadata, spec.replicas,
// spec.progressDeadlineSeconds, status) and its metadata, which the installer, the Upgrade and GC loops read here too
// (objectcache.For): ALM reads Deployments from the cache only for those and applies them from the bundle, so the pod
// template, most of a Deployment's bytes, is left out, for every Deployment of the cluster the cache holds. So is spec.selector: the installer finds the pods of a Deployment that does not become available, to
// say why (installer.explain), by the selector of the bundle's Deployment, which the cached one carries (the applied
// hash says so, and an apps/v1 Deployment's selector cannot change).
func DeploymentReadiness(obj any) (any, error) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return slim.Transform()(obj)
	}
	slim.Metadata(d)
	d.Spec = appsv1.DeploymentSpec{Replicas: d.Spec.Replicas, ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds}
	slim.DeploymentConditions(d.Status.Conditions)
	return d, nil
}

func catalogLabelSelector() labels.Selector {
	req, err := labels.NewRequirement(operatorsv1alpha1.LabelCatalog, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}
