// Package catalogsource is the CatalogSource loop: it loads each CatalogSource (a directory, the ConfigMaps that
// `almctl publish` writes, or a File-Based Catalog image polled by digest) into the registry the catalog loops
// resolve from, and reports packages, bundles and rejected bundles in status. A broken bundle is reported and
// excluded; the rest of the catalog keeps serving, and a source that cannot be read keeps serving what it last
// loaded.
package catalogsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/configmap"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/internal/outage"
	"github.com/almproject/alm/internal/status"
)

// Reconciler keeps the registry in step with the CatalogSources.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	// Resync is how often a directory source is read again (ConfigMap sources are watched, image sources polled).
	Resync time.Duration
	// Images keeps the registry clients of image sources (shared with the installer, which pulls bundle images
	// with the same credentials); nil means one of the loop's own.
	Images *imagepull.Clients
	// Reader reads the pull Secrets and CA ConfigMaps an image source names, at each poll: the API server, not
	// the manager's cache, which holds no Secrets and only the ConfigMaps of catalogs (cmd/alm). nil: Client.
	Reader client.Reader
	// Directories says which namespaces may serve which directories; the zero value lets none.
	Directories DirectoryPolicy
}

// loaded is what reading a source found: its contents (nil when unchanged since the last load) and a digest that
// changes when they do; for an image source, the poll.
type loaded struct {
	contents *fbc.Contents
	digest   string
	image    *imageLoad
}

// Reconcile loads one CatalogSource and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := r.Get(ctx, req.NamespacedName, cs); err != nil || !cs.DeletionTimestamp.IsZero() {
		if client.IgnoreNotFound(err) == nil {
			r.Registry.Delete(req.NamespacedName)
			r.images().Forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	st := *cs.Status.DeepCopy()
	st.ObservedGeneration = cs.Generation
	now := metav1.Now()
	got, err := r.load(ctx, cs)
	if cs.Spec.Image != nil {
		imageStatus(&st, got.image, err == nil && got.contents != nil, now)
	}
	if err != nil {
		return r.failed(ctx, cs, st, err)
	}
	old, known := r.Registry.Digest(req.NamespacedName)
	ix := r.Registry.Set(req.NamespacedName, int(cs.Spec.Priority), got.contents, got.digest)
	if !known || old != got.digest || st.LastSync == nil {
		st.LastSync = &now
	}
	summary := ix.Status(registry.Name(req.NamespacedName))
	st.Packages = summary.Packages
	st.PackageCount, st.BundleCount = int32(len(summary.Packages)), int32(summary.Bundles)
	st.RejectedBundles, st.RejectedCount = summary.Rejected, int32(summary.RejectedCount)
	msg := fmt.Sprintf("serving %d bundles of %d packages", summary.Bundles, len(summary.Packages))
	if got.image != nil {
		msg += " from " + got.image.ref
	}
	set(&st, cs, operatorsv1alpha1.ConditionReady, metav1.ConditionTrue, operatorsv1alpha1.ReasonSynced, msg)
	if summary.RejectedCount > 0 {
		set(&st, cs, operatorsv1alpha1.ConditionDegraded, metav1.ConditionTrue, operatorsv1alpha1.ReasonBundlesRejected,
			fmt.Sprintf("%d bundles rejected and excluded (see status.rejectedBundles); the others are served", summary.RejectedCount))
	} else {
		set(&st, cs, operatorsv1alpha1.ConditionDegraded, metav1.ConditionFalse, operatorsv1alpha1.ReasonAllBundlesValid, "no bundle was rejected")
	}
	res, err := r.writeStatus(ctx, cs, st)
	if res.IsZero() {
		res.RequeueAfter = r.nextRead(cs, false)
	}
	return res, err
}

// failed reports a source that cannot be read: what was loaded before keeps serving, and Ready says why.
func (r *Reconciler) failed(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, st operatorsv1alpha1.CatalogSourceStatus, err error) (reconcile.Result, error) {
	reason := operatorsv1alpha1.ReasonSourceError
	var pull *pullError
	var invalid *invalidSpecError
	var invalidPull *imagepull.InvalidSpecError
	var refusedDir *directoryRefusedError
	switch {
	case errors.As(err, &refusedDir):
		// Refused by policy: serve nothing, not even what an earlier spec loaded.
		reason = operatorsv1alpha1.ReasonDirectoryRefused
		r.Registry.Delete(client.ObjectKeyFromObject(cs))
		st.Packages, st.PackageCount, st.BundleCount, st.RejectedBundles, st.RejectedCount = nil, 0, 0, nil, 0
	case errors.As(err, &pull):
		reason = pull.reason
	case errors.As(err, &invalid), errors.As(err, &invalidPull):
		reason = operatorsv1alpha1.ReasonInvalidSpec
	}
	msg := err.Error()
	if _, ok := r.Registry.Digest(client.ObjectKeyFromObject(cs)); ok && st.Image != nil && st.Image.Ref != "" {
		msg += "; still serving " + st.Image.Ref
	}
	set(&st, cs, operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
	if res, werr := r.writeStatus(ctx, cs, st); werr != nil || !res.IsZero() {
		return res, werr
	}
	switch {
	case reason == operatorsv1alpha1.ReasonInvalidSpec:
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("CatalogSource %s: %w", klog.KObj(cs), err))
	case cs.Spec.Directory != nil, cs.Spec.Image != nil:
		return reconcile.Result{RequeueAfter: r.nextRead(cs, true)}, nil // polled: read again after the interval
	}
	return reconcile.Result{}, fmt.Errorf("loading CatalogSource %s: %w", klog.KObj(cs), err)
}

// nextRead is when a polled source is read again: directories after the resync period, image tags after their poll
// interval (a failed pull sooner); watched ConfigMaps and digest references never.
func (r *Reconciler) nextRead(cs *operatorsv1alpha1.CatalogSource, failed bool) time.Duration {
	switch {
	case cs.Spec.Directory != nil:
		return r.resync()
	case cs.Spec.Image != nil:
		d := pollInterval(cs.Spec.Image)
		if failed && (d == 0 || d > retryInterval) {
			d = retryInterval
		}
		return d
	}
	return 0
}

func (r *Reconciler) images() *imagepull.Clients {
	if r.Images == nil {
		r.Images = &imagepull.Clients{}
	}
	return r.Images
}

// load reads the source and returns its contents and a digest that changes when they do.
func (r *Reconciler) load(ctx context.Context, cs *operatorsv1alpha1.CatalogSource) (loaded, error) {
	switch {
	case cs.Spec.Image != nil:
		img, err := r.loadImage(ctx, cs)
		if err != nil {
			return loaded{}, err
		}
		return loaded{contents: img.contents, digest: img.digest, image: img}, nil
	case cs.Spec.Directory != nil:
		return r.loadDirectory(cs)
	case cs.Spec.ConfigMap != nil:
		selector, err := Selector(cs)
		if err != nil {
			return loaded{}, &invalidSpecError{fmt.Errorf("spec.configMap.selector: %w", err)}
		}
		list := &corev1.ConfigMapList{}
		if err := r.List(ctx, list, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return loaded{}, err
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		h := sha256.New()
		for _, cm := range list.Items {
			fmt.Fprintf(h, "%s/%s\n", cm.Name, cm.ResourceVersion)
		}
		return loaded{contents: configmap.Load(list.Items), digest: hex.EncodeToString(h.Sum(nil))}, nil
	}
	return loaded{}, &invalidSpecError{errors.New("spec: none of configMap, directory and image is set")}
}

// loadDirectory reads a directory source, once the policy allows its namespace to read the path: the path is
// resolved and checked before anything under it is read.
func (r *Reconciler) loadDirectory(cs *operatorsv1alpha1.CatalogSource) (loaded, error) {
	dir, err := r.Directories.Check(cs.Namespace, cs.Spec.Directory.Path)
	if err != nil {
		return loaded{}, err
	}
	digest, err := dirDigest(dir)
	if err != nil {
		var refused *directoryRefusedError
		if errors.As(err, &refused) {
			return loaded{}, err
		}
		return loaded{}, fmt.Errorf("spec.directory.path %s: %w", cs.Spec.Directory.Path, err)
	}
	if old, ok := r.Registry.Digest(client.ObjectKeyFromObject(cs)); ok && old == digest {
		return loaded{digest: digest}, nil // unchanged: Set keeps the loaded contents
	}
	contents, err := fbc.LoadDir(dir)
	if err != nil {
		return loaded{}, fmt.Errorf("spec.directory.path %s: %w", cs.Spec.Directory.Path, err)
	}
	return loaded{contents: contents, digest: digest}, nil
}

// invalidSpecError: the CatalogSource's spec cannot be served until it is changed.
type invalidSpecError struct{ error }

func (e *invalidSpecError) Unwrap() error { return e.error }

// Selector selects the ConfigMaps of a ConfigMap CatalogSource: the catalog label plus spec.configMap.selector.
func Selector(cs *operatorsv1alpha1.CatalogSource) (labels.Selector, error) {
	selector := labels.Everything()
	if cs.Spec.ConfigMap != nil && cs.Spec.ConfigMap.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(cs.Spec.ConfigMap.Selector)
		if err != nil {
			return nil, err
		}
		selector = s
	}
	req, err := labels.NewRequirement(operatorsv1alpha1.LabelCatalog, selection.Equals, []string{cs.Name})
	if err != nil {
		return nil, err
	}
	return selector.Add(*req), nil
}

// dirDigest hashes the paths, sizes and modification times under dir: cheap enough to poll. The walk refuses what
// ALM does not read (walkDir), so the catalog loader that runs after it reads only the directory's own files.
func dirDigest(dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	h := sha256.New()
	err := walkDir(dir, func(path string, info fs.FileInfo) {
		fmt.Fprintf(h, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func (r *Reconciler) resync() time.Duration {
	if r.Resync > 0 {
		return r.Resync
	}
	return DefaultResync
}

// DefaultResync is how often a directory source is read again when Resync is not set: the directory is polled,
// by digest.
const DefaultResync = 30 * time.Second

// writeStatus writes st; a write refused because the copy read was stale is retried soon (the loop's own status
// writes do not trigger it, so no event would bring the object back).
func (r *Reconciler) writeStatus(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, st operatorsv1alpha1.CatalogSourceStatus) (reconcile.Result, error) {
	orig := cs.DeepCopy()
	cs.Status = st
	return status.PatchOrRetry(ctx, r, orig, cs)
}

func set(st *operatorsv1alpha1.CatalogSourceStatus, cs *operatorsv1alpha1.CatalogSource, t string, s metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: cs.Generation})
}

// SetupWithManager registers the loop: CatalogSources, and the labelled ConfigMaps that make up their contents.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("catalogsource").WithOptions(outage.Controller()).
		// Its own status writes do not trigger a read (an image source would poll at every write); a spec, label or
		// annotation change does: `kubectl annotate catsrc NAME refresh=$(date +%s)` polls an image source now.
		For(&operatorsv1alpha1.CatalogSource{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			name, ok := obj.GetLabels()[operatorsv1alpha1.LabelCatalog]
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
		})).
		Complete(r)
}
