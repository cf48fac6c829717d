package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

// SummaryName is the name of the ConfigMap gateway-config writes in its watch namespace.
const SummaryName = "gateway-config-summary"

// The operator reads KongServices and writes one ConfigMap in the namespace it watches; the bundle grants these rules
// in that namespace only (CSV permissions, not clusterPermissions).
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch

// summaryReconciler keeps the summary ConfigMap equal to the list of KongServices in one namespace.
type summaryReconciler struct {
	client.Client
	namespace string
}

// Reconcile lists the namespace's KongServices and writes the summary ConfigMap if it differs.
func (r *summaryReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	services := &configurationv1alpha1.KongServiceList{}
	if err := r.List(ctx, services, client.InNamespace(r.namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing KongServices in namespace %s: %w", r.namespace, err)
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = SummaryName, r.namespace
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["app.kubernetes.io/managed-by"] = "gateway-config"
		cm.Data = summarize(services.Items)
		return nil
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("writing ConfigMap %s/%s: %w", r.namespace, SummaryName, err)
	}
	if op != controllerutil.OperationResultNone {
		ctrl.LoggerFrom(ctx).Info("Summary written", "configMap", SummaryName, "operation", op, "services", len(services.Items))
	}
	return ctrl.Result{}, nil
}

// summarize returns the ConfigMap data for a list of KongServices: "count" and "services", one line per service,
// sorted by name: `<name> <host>:<port> programmed=<True|False|Unknown>`.
func summarize(services []configurationv1alpha1.KongService) map[string]string {
	lines := make([]string, 0, len(services))
	for _, s := range services {
		programmed := "Unknown"
		if c := apimeta.FindStatusCondition(s.Status.Conditions, "Programmed"); c != nil {
			programmed = string(c.Status)
		}
		port := s.Spec.Port
		if port == 0 {
			port = 80
		}
		lines = append(lines, fmt.Sprintf("%s %s:%d programmed=%s", s.Name, s.Spec.Host, port, programmed))
	}
	sort.Strings(lines)
	data := map[string]string{"count": fmt.Sprint(len(lines)), "services": strings.Join(lines, "\n")}
	if len(lines) > 0 {
		data["services"] += "\n"
	}
	return data
}

// setupWithManager watches the namespace's KongServices and the summary ConfigMap (so a deleted or edited summary
// is written again), and writes the summary once at start even when there are no KongServices.
func (r *summaryReconciler) setupWithManager(mgr ctrl.Manager) error {
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.namespace, Name: SummaryName}}
	toSummary := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{key}
	})
	isSummary := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetName() == SummaryName && o.GetNamespace() == r.namespace
	})
	atStart := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(key)
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("summary").
		For(&corev1.ConfigMap{}, builder.WithPredicates(isSummary)).
		Watches(&configurationv1alpha1.KongService{}, toSummary).
		WatchesRawSource(atStart).
		Complete(r)
}
