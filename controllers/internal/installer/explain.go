package installer

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/controllers/internal/rollout"
)

// maxPods bounds the pods read to explain one Deployment.
const maxPods = 50

// explain adds to why (rollout.DeploymentReady's "Deployment <name>: <counts>") the most useful reason the cluster reports
// for d's pods not becoming available (rollout.Diagnose), read from d's conditions and its pods, and returns it as
// "Deployment <name>: <cause> (<counts>)" with the cause's reason, or why and reason unchanged when the cluster
// reports none. reason, when set already (an earlier Deployment's), is kept. A Deployment whose spec change is not
// observed yet is not explained: its pods are the old spec's. The pods are read from the API server only when a
// Deployment is not ready (one list per Deployment and step); an error reading them leaves the Deployment's own
// conditions to explain it. The pods are those of selector, the spec.selector of the plan's Deployment: ALM's cache
// does not keep a Deployment's (loops.DeploymentReadiness), and the caller has checked that d carries the plan's
// content (an apps/v1 Deployment's selector cannot change anyway).
func (in *Installer) explain(ctx context.Context, d *appsv1.Deployment, selector *metav1.LabelSelector, why, reason string) (string, string) {
	if d.Status.ObservedGeneration < d.Generation {
		return why, reason
	}
	var pods []corev1.Pod
	if sel, err := metav1.LabelSelectorAsSelector(selector); err == nil && selector != nil && in.Reader != nil {
		list := &corev1.PodList{}
		err := in.Reader.List(ctx, list, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.Limit(maxPods))
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Cannot read the pods of a Deployment to explain its rollout", "Deployment", client.ObjectKeyFromObject(d), "error", err.Error())
		}
		pods = list.Items
	}
	prob := rollout.Diagnose(d, pods)
	if prob == nil {
		return why, reason
	}
	counts := strings.TrimSuffix(strings.TrimPrefix(why, "Deployment "+d.Name+": "), rollout.AvailableDetail(d))
	if reason == "" {
		reason = prob.Reason
	}
	return fmt.Sprintf("Deployment %s: %s (%s)", d.Name, prob.Message, counts), reason
}
