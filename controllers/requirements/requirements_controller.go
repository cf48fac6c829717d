// Package requirements is the OperatorVersion requirements loop: a pending OperatorVersion that requires a CRD
// that does not exist gets that CRD created from the catalog bundle that owns it (from the catalog's manifests, or
// pulled from the bundle's image when the catalog lists only the image). The CRD is labelled with the providing
// package and the namespace that needed it, so that the CRD loop installs the operator that owns it.
//
// Only the catalogs the version's namespace may resolve from are looked in (its own and ALM's): another tenant's
// catalog never defines a cluster-wide kind for this one. The CRD is created only if the identity the version
// installs as may create it (access.Checker: its spec.serviceAccountName, or ALM itself in a trusted namespace).
package requirements

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/index"
	"github.com/almproject/alm/controllers/internal/access"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/ownership"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/outage"
)

// Reconciler creates missing required CRDs from the catalog.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	Recorder events.EventRecorder
	// Bundles pulls the bundle images of bundles the catalog lists only as an image (shared with the Install and
	// Upgrade loops); Reader reads their CatalogSources' pull Secrets (an API reader; nil: Client).
	Bundles *bundlecontent.Source
	Reader  client.Reader
	// Namespace is ALM's own namespace, whose CatalogSources serve every namespace.
	Namespace string
	// Access checks that the identity a version installs as may create the CRD; nil: not checked (tests of the
	// catalog side only).
	Access *access.Checker
}

// requeuePull is when a CRD whose bundle image could not be pulled is tried again: nothing watched says when the
// registry or the pull Secret is fixed.
const requeuePull = 30 * time.Second

// requeueRefused is when a CRD the version's identity may not create is checked again: a grant or a namespace label
// is not watched.
const requeueRefused = 30 * time.Second

// errPull: the bundle that owns a required CRD is only an image, and that image cannot be pulled (yet).
var errPull = errors.New("its bundle image cannot be pulled")

// Reconcile creates the missing required CRDs of one pending OperatorVersion.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov := &operatorsv1alpha1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !Pending(ov) {
		return ctrl.Result{}, nil
	}
	if err := r.declareDependencies(ctx, ov); err != nil {
		return ctrl.Result{}, err
	}
	ix := r.Registry.Index()
	catalogs := r.Registry.Catalogs(ov.Namespace, "", "", r.Namespace)
	var missing []string
	res := ctrl.Result{}
	for _, desc := range ov.Spec.CustomResourceDefinitions.Required {
		existing := &apiextensionsv1.CustomResourceDefinition{}
		err := r.Get(ctx, client.ObjectKey{Name: desc.Name}, existing)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		gvk := GVK(desc.Name, desc.Version, desc.Kind)
		crd, owner, err := r.crd(ctx, ix, gvk, catalogs)
		if errors.Is(err, errPull) {
			res.RequeueAfter = requeuePull
		}
		if errors.Is(err, index.ErrPackageNotFound) || errors.Is(err, bundle.ErrNoManifests) || errors.Is(err, errPull) {
			missing = append(missing, fmt.Sprintf("%s (%v)", desc.Name, err))
			continue
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		crd = crd.DeepCopy()
		crd.ResourceVersion, crd.UID = "", ""
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		// Provided by the bundle's package, needed in this namespace; owned by no version until that package's
		// operator installs and claims it.
		crd.Labels[operatorsv1alpha1.LabelAppType] = ownership.LabelValue(owner.Package)
		crd.Labels[operatorsv1alpha1.LabelOwnerNamespace] = ov.Namespace
		if refused, err := r.authorize(ctx, ov, crd); err != nil || refused != "" {
			if err != nil {
				return ctrl.Result{}, err
			}
			r.Recorder.Eventf(ov, nil, corev1.EventTypeWarning, operatorsv1alpha1.ReasonInstallRefused, "CreateCRD",
				"Required CRD %s (from bundle %s) was not created: %s", crd.Name, owner.Name, refused)
			res.RequeueAfter = requeueRefused
			continue
		}
		if err := r.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("creating CRD %s required by %s/%s: %w", crd.Name, ov.Namespace, ov.Name, err)
		}
		r.Recorder.Eventf(ov, nil, corev1.EventTypeNormal, "RequiredCRDCreated", "CreateCRD",
			"Created CRD %s from bundle %s of package %s", crd.Name, owner.Name, owner.Package)
	}
	if len(missing) > 0 {
		// No catalog provides it yet; catalog changes re-trigger this loop.
		r.Recorder.Eventf(ov, nil, corev1.EventTypeWarning, "RequiredCRDNotInCatalog", "CreateCRD",
			"No catalog provides %s", strings.Join(missing, ", "))
	}
	return res, nil
}

// authorize says why the identity ov installs as may not create crd ("" when it may).
func (r *Reconciler) authorize(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	if r.Access == nil {
		return "", nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return "", err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	why, err := r.Access.Check(ctx, ov.Namespace, ov.Spec.ServiceAccountName, []*unstructured.Unstructured{u},
		func(schema.GroupVersionKind) (string, error) { return "customresourcedefinitions", nil })
	if err != nil {
		return "", fmt.Errorf("OperatorVersion %s/%s: checking who may create CRD %s: %w", ov.Namespace, ov.Name, crd.Name, err)
	}
	return why, nil
}

// crd returns the CRD of gvk and the catalog bundle that owns it, from catalogs: from the catalog's manifests, else from the
// image of an owning bundle the catalog lists only as an image, pulled through the shared bundle cache with the pull
// options of that bundle's CatalogSource. A pull that fails is errPull, naming the image and the cause.
func (r *Reconciler) crd(ctx context.Context, ix *index.Index, gvk schema.GroupVersionKind, catalogs []string) (*apiextensionsv1.CustomResourceDefinition, *bundle.Bundle, error) {
	if len(catalogs) == 0 {
		return nil, nil, fmt.Errorf("%w: no CatalogSource serves this namespace", index.ErrPackageNotFound)
	}
	crd, owner, err := ix.CRD(gvk, catalogs...)
	if !errors.Is(err, bundle.ErrNoManifests) {
		return crd, owner, err
	}
	reader := r.Reader
	if reader == nil {
		reader = r.Client
	}
	var failures []string
	for _, b := range ix.Owners(gvk, catalogs...) {
		if b.HasManifests() || b.Image == "" || b.ImageDigest == "" {
			continue
		}
		ns, name, _ := strings.Cut(b.Catalog, "/")
		content, perr := r.Bundles.Pull(ctx, reader, types.NamespacedName{Namespace: ns, Name: name}, b.Image, b.ImageDigest)
		var e *bundlecontent.Error
		switch {
		case errors.As(perr, &e):
			failures = append(failures, e.Message)
			continue
		case perr != nil:
			return nil, nil, perr
		}
		if crd, perr = content.CRD(gvk.Group, gvk.Kind); perr != nil || crd == nil {
			failures = append(failures, fmt.Sprintf("bundle image %s@%s has no CRD for %s (%v)", b.Image, b.ImageDigest, gvk, perr))
			continue
		}
		return crd, b, nil
	}
	if len(failures) > 0 {
		return nil, nil, fmt.Errorf("%s: %w: %s", gvk, errPull, strings.Join(failures, "; "))
	}
	return nil, nil, err
}

// Pending says whether ov is still waiting for its requirements (required CRDs, required packages) (or failed waiting: a catalog may still provide
// them, and the install then proceeds). A version without spec.bundle never is: the lifecycle loops apply nothing
// of it (bundlecontent.Unrecorded), so nothing is created for it either.
func Pending(ov *operatorsv1alpha1.OperatorVersion) bool {
	if ov.Spec.Bundle == nil {
		return false
	}
	waiting := ov.Status.Phase == "" || ov.Status.Phase == operatorsv1alpha1.PhasePending ||
		ov.Status.Phase == operatorsv1alpha1.PhaseFailed && ov.Status.Reason == operatorsv1alpha1.ReasonRequirementMissing
	requires := len(ov.Spec.CustomResourceDefinitions.Required) > 0 || len(ov.Spec.RequiredPackages) > 0
	return ov.DeletionTimestamp.IsZero() && requires && waiting
}

// GVK is the kind a CRD description names: the group is the CRD name after its plural.
func GVK(crdName, version, kind string) schema.GroupVersionKind {
	group := crdName
	if i := strings.IndexByte(crdName, '.'); i >= 0 {
		group = crdName[i+1:]
	}
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// SetupWithManager registers the loop: OperatorVersions, and catalog changes for the pending ones.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("requirements").WithOptions(outage.Controller()).
		// Only pending versions with required CRDs have anything for this loop to do.
		For(&operatorsv1alpha1.OperatorVersion{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			ov, ok := obj.(*operatorsv1alpha1.OperatorVersion)
			return ok && Pending(ov)
		}))).
		Watches(&operatorsv1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			list := &operatorsv1alpha1.OperatorVersionList{}
			if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil { // read only
				return nil
			}
			var out []reconcile.Request
			for i := range list.Items {
				if Pending(&list.Items[i]) {
					out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
				}
			}
			return out
		}), registry.CatalogChanged()).
		Complete(r)
}
