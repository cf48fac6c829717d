// Package catalogsource is the CatalogSource loop: it loads each CatalogSource (a directory, or the ConfigMaps that
// `almctl publish` writes) into the registry the catalog loops resolve from, and reports packages, bundles and
// rejected bundles in status. A broken bundle is reported and excluded; the rest of the catalog keeps serving.
package catalogsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/configmap"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/controllers/internal/status"
	"github.com/almproject/alm/controllers/registry"
)

// Reconciler keeps the registry in step with the CatalogSources.
type Reconciler struct {
	client.Client
	Registry *registry.Registry
	// Resync is how often a directory source is read again (ConfigMap sources are watched).
	Resync time.Duration
}

// Reconcile loads one CatalogSource and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := r.Get(ctx, req.NamespacedName, cs); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Registry.Delete(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cs.DeletionTimestamp.IsZero() {
		r.Registry.Delete(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	st := *cs.Status.DeepCopy()
	st.ObservedGeneration = cs.Generation
	result := reconcile.Result{}
	if cs.Spec.Directory != nil {
		result.RequeueAfter = r.resync()
	}

	contents, digest, err := r.load(ctx, cs)
	if err != nil {
		// The source cannot be read: keep serving what was loaded before, and say why.
		set(&st, cs, operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, operatorsv1alpha1.ReasonSourceError, err.Error())
		if werr := r.writeStatus(ctx, cs, st); werr != nil {
			return reconcile.Result{}, werr
		}
		var invalid *invalidSpecError
		switch {
		case errors.As(err, &invalid):
			return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("CatalogSource %s: %w", klog.KObj(cs), err))
		case cs.Spec.Directory != nil:
			return result, nil // polled: the directory is read again after the resync period
		}
		return reconcile.Result{}, fmt.Errorf("loading CatalogSource %s: %w", klog.KObj(cs), err)
	}
	old, known := r.Registry.Digest(req.NamespacedName)
	ix := r.Registry.Set(req.NamespacedName, int(cs.Spec.Priority), contents, digest)
	if !known || old != digest || st.LastSync == nil {
		now := metav1.Now()
		st.LastSync = &now
	}
	summary := ix.Status(registry.Name(req.NamespacedName))
	st.Packages = summary.Packages
	st.PackageCount, st.BundleCount = int32(len(summary.Packages)), int32(summary.Bundles)
	st.RejectedBundles, st.RejectedCount = summary.Rejected, int32(summary.RejectedCount)
	msg := fmt.Sprintf("serving %d bundles of %d packages", summary.Bundles, len(summary.Packages))
	set(&st, cs, operatorsv1alpha1.ConditionReady, metav1.ConditionTrue, operatorsv1alpha1.ReasonSynced, msg)
	if summary.RejectedCount > 0 {
		set(&st, cs, operatorsv1alpha1.ConditionDegraded, metav1.ConditionTrue, operatorsv1alpha1.ReasonBundlesRejected,
			fmt.Sprintf("%d bundles rejected and excluded (see status.rejectedBundles); the others are served", summary.RejectedCount))
	} else {
		set(&st, cs, operatorsv1alpha1.ConditionDegraded, metav1.ConditionFalse, operatorsv1alpha1.ReasonAllBundlesValid, "no bundle was rejected")
	}
	return result, r.writeStatus(ctx, cs, st)
}

// load reads the source and returns its contents and a digest that changes when they do.
func (r *Reconciler) load(ctx context.Context, cs *operatorsv1alpha1.CatalogSource) (*fbc.Contents, string, error) {
	switch {
	case cs.Spec.Directory != nil:
		digest, err := dirDigest(cs.Spec.Directory.Path)
		if err != nil {
			return nil, "", fmt.Errorf("spec.directory.path %s: %w", cs.Spec.Directory.Path, err)
		}
		if old, ok := r.Registry.Digest(client.ObjectKeyFromObject(cs)); ok && old == digest {
			return nil, digest, nil // unchanged: Set keeps the loaded contents
		}
		contents, err := fbc.LoadDir(cs.Spec.Directory.Path)
		if err != nil {
			return nil, "", fmt.Errorf("spec.directory.path %s: %w", cs.Spec.Directory.Path, err)
		}
		return contents, digest, nil
	case cs.Spec.ConfigMap != nil:
		selector, err := Selector(cs)
		if err != nil {
			return nil, "", &invalidSpecError{fmt.Errorf("spec.configMap.selector: %w", err)}
		}
		list := &corev1.ConfigMapList{}
		if err := r.List(ctx, list, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, "", err
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		h := sha256.New()
		for _, cm := range list.Items {
			fmt.Fprintf(h, "%s/%s\n", cm.Name, cm.ResourceVersion)
		}
		return configmap.Load(list.Items), hex.EncodeToString(h.Sum(nil)), nil
	}
	return nil, "", &invalidSpecError{errors.New("spec: neither configMap nor directory is set")}
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

// dirDigest hashes the paths, sizes and modification times under dir: cheap enough to poll.
func dirDigest(dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
		return nil
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

func (r *Reconciler) writeStatus(ctx context.Context, cs *operatorsv1alpha1.CatalogSource, st operatorsv1alpha1.CatalogSourceStatus) error {
	orig := cs.DeepCopy()
	cs.Status = st
	return status.Patch(ctx, r, orig, cs)
}

func set(st *operatorsv1alpha1.CatalogSourceStatus, cs *operatorsv1alpha1.CatalogSource, t string, s metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: cs.Generation})
}

// SetupWithManager registers the loop: CatalogSources, and the labelled ConfigMaps that make up their contents.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("catalogsource").
		For(&operatorsv1alpha1.CatalogSource{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			name, ok := obj.GetLabels()[operatorsv1alpha1.LabelCatalog]
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
		})).
		Complete(r)
}
