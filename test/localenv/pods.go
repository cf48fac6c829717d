package localenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/localnode"
)

// RunningPod returns the Ready pod of a Deployment's current spec (the pod a Service would send to), or an error
// saying what its pods are doing.
func (e *Env) RunningPod(ctx context.Context, namespace, deployment string) (*corev1.Pod, error) {
	d := &appsv1.Deployment{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, d); err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := e.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	var seen []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
			return p, nil
		}
		seen = append(seen, fmt.Sprintf("%s %s ready=%t deleting=%t", p.Name, p.Status.Phase, podReady(p), p.DeletionTimestamp != nil))
	}
	return nil, fmt.Errorf("no Ready pod of Deployment %s/%s; its pods: %v", namespace, deployment, seen)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodToken is the ServiceAccount token the kubelet mounted into a pod (its projected kube-api-access volume), read
// from the kubelet's directory on the node.
func PodToken(pod *corev1.Pod) (string, error) {
	paths, err := filepath.Glob(filepath.Join(localnode.RootDir, "kubelet", "pods", string(pod.UID), "volumes",
		"kubernetes.io~projected", "kube-api-access-*", "token"))
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("pod %s/%s has no ServiceAccount token on the node", pod.Namespace, pod.Name)
	}
	data, err := os.ReadFile(paths[0])
	return strings.TrimSpace(string(data)), err
}

// PodConfig is a client configuration with the ServiceAccount token of the Ready pod of a Deployment: what the pod
// itself may do.
func (e *Env) PodConfig(ctx context.Context, namespace, deployment string) (*rest.Config, error) {
	pod, err := e.RunningPod(ctx, namespace, deployment)
	if err != nil {
		return nil, err
	}
	token, err := PodToken(pod)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(e.CP.Config)
	cfg.BearerToken = token
	return cfg, nil
}
