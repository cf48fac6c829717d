// Package konnect is the Konnect operator: it keeps Kong Konnect in the state declared by Kubernetes objects
// (KonnectAPIAuthConfiguration, KonnectGatewayControlPlane, KongService, KongRoute, KongConsumer) with one generic
// reconciliation loop, the one of the seed konnect-reconciliation-loop.md.
package konnect

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
)

// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectapiauthconfigurations;konnectgatewaycontrolplanes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectapiauthconfigurations/status;konnectgatewaycontrolplanes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectgatewaycontrolplanes/finalizers;konnectapiauthconfigurations/finalizers,verbs=update
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices;kongroutes;kongconsumers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices/status;kongroutes/status;kongconsumers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices/finalizers;kongroutes/finalizers;kongconsumers/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Options configure the operator's loops.
type Options struct {
	// SyncPeriod is how long an unchanged object waits before Konnect is brought back to its declared state.
	SyncPeriod time.Duration
	// DriftMode: DriftModeList (default) or DriftModeUpdate.
	DriftMode DriftMode
	// RateLimit is the most requests per second sent to one Konnect organization; <= 0 is unlimited.
	RateLimit float64
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// Clients overrides the Konnect client factory (tests); nil uses sdk-konnect-go.
	Clients ClientFactory
}

// Setup registers the field indexes and every loop of the operator with mgr.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) error {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = time.Minute
	}
	if opts.DriftMode == "" {
		opts.DriftMode = DriftModeList
	}
	if opts.DriftMode != DriftModeList && opts.DriftMode != DriftModeUpdate {
		return fmt.Errorf("unknown drift mode %q (want %s or %s)", opts.DriftMode, DriftModeList, DriftModeUpdate)
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 8
	}
	if opts.Clients == nil {
		opts.Clients = NewClientFactory(mgr.GetClient(), opts.RateLimit)
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &konnectv1alpha2.KonnectGatewayControlPlane{}, indexControlPlaneID, func(o client.Object) []string {
		if id := o.(*konnectv1alpha2.KonnectGatewayControlPlane).Status.ID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &konnectv1alpha1.KonnectAPIAuthConfiguration{}, indexSecretRef, func(o client.Object) []string {
		a := o.(*konnectv1alpha1.KonnectAPIAuthConfiguration)
		if a.Spec.Type != konnectv1alpha1.KonnectAPIAuthTypeSecretRef || a.Spec.SecretRef == nil {
			return nil
		}
		return []string{secretNamespace(a) + "/" + a.Spec.SecretRef.Name}
	}); err != nil {
		return err
	}

	auth := &AuthConfigReconciler{Client: mgr.GetClient(), Clients: opts.Clients, Recorder: mgr.GetEventRecorder("konnect-operator"), SyncPeriod: opts.SyncPeriod}
	err := ctrl.NewControllerManagedBy(mgr).Named("konnectapiauthconfiguration").
		For(&konnectv1alpha1.KonnectAPIAuthConfiguration{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, s client.Object) []reconcile.Request {
			list := &konnectv1alpha1.KonnectAPIAuthConfigurationList{}
			if err := mgr.GetClient().List(ctx, list, client.MatchingFields{indexSecretRef: s.GetNamespace() + "/" + s.GetName()}); err != nil {
				return nil
			}
			reqs := make([]reconcile.Request, 0, len(list.Items))
			for i := range list.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
			return reqs
		})).
		// A control plane going away may release its auth configuration's in-use finalizer.
		Watches(&konnectv1alpha2.KonnectGatewayControlPlane{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			cp := o.(*konnectv1alpha2.KonnectGatewayControlPlane)
			if cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}}}
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: retryLimiter(opts.SyncPeriod)}).
		Complete(auth)
	if err != nil {
		return err
	}

	if err := setupKind[*konnectv1alpha2.KonnectGatewayControlPlane](ctx, mgr, ControlPlaneKind{}, opts); err != nil {
		return err
	}
	if err := setupKind[*configurationv1alpha1.KongService](ctx, mgr, ServiceKind{}, opts); err != nil {
		return err
	}
	if err := setupKind[*configurationv1alpha1.KongRoute](ctx, mgr, RouteKind{}, opts); err != nil {
		return err
	}
	return setupKind[*configurationv1.KongConsumer](ctx, mgr, ConsumerKind{}, opts)
}

// retryLimiter is the backoff of failed reconciles: exponential from 50ms, but never longer than the sync period
// (controller-runtime's default grows to 1000s, far too long to wait out a burst of 429s or 5xx). The Konnect rate
// limit, not the workqueue, protects Konnect.
func retryLimiter(syncPeriod time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, max(syncPeriod, time.Second))
}

// setupKind registers the generic loop for one kind: its reference indexes, the watches that re-reconcile an
// object as soon as what it references changes, and (DriftModeList) its drift scanner.
func setupKind[T client.Object](ctx context.Context, mgr manager.Manager, kind Kind[T], opts Options) error {
	r := &Reconciler[T]{
		Client:     mgr.GetClient(),
		Kind:       kind,
		Clients:    opts.Clients,
		Recorder:   mgr.GetEventRecorder("konnect-operator"),
		SyncPeriod: opts.SyncPeriod,
		Mode:       opts.DriftMode,
		Now:        time.Now,
	}
	// Reconciles run only on the leader; from now on no other process creates entities for our objects.
	if err := mgr.Add(manager.RunnableFunc(func(context.Context) error {
		r.since.Store(time.Now().UnixNano())
		return nil
	})); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(kind.Name())).
		For(kind.New()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: retryLimiter(opts.SyncPeriod)})
	for _, ri := range kind.Indexes() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, kind.New(), ri.Field, ri.Extract); err != nil {
			return err
		}
		field := ri.Field
		b = b.Watches(ri.Target, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, target client.Object) []reconcile.Request {
			list := kind.NewList()
			if err := mgr.GetClient().List(ctx, list, client.InNamespace(target.GetNamespace()), client.MatchingFields{field: target.GetName()}); err != nil {
				return nil
			}
			items := kind.Items(list)
			reqs := make([]reconcile.Request, 0, len(items))
			for _, o := range items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
			return reqs
		}))
	}
	if opts.DriftMode == DriftModeList {
		scanner := &driftScanner[T]{r: r, events: make(chan event.GenericEvent, 1024)}
		if err := mgr.Add(scanner); err != nil {
			return err
		}
		b = b.WatchesRawSource(source.Channel(scanner.events, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}
