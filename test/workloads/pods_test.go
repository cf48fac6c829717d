package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localnode"
)

// podProcess is one running operator as the node runs it: its pod, the one container of that pod (CRI container ID
// and the kubelet's restart count) and that container's main process on the node.
type podProcess struct {
	Namespace, Deployment, Name string
	UID                         types.UID
	ContainerID                 string
	Restarts                    int32
	PID                         int
}

func (p podProcess) String() string {
	return fmt.Sprintf("%s (uid %s, container %s, restarts %d, pid %d)", p.Name, p.UID, shortID(p.ContainerID), p.Restarts, p.PID)
}

func shortID(containerID string) string {
	id := containerID[strings.LastIndex(containerID, "/")+1:]
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// deploymentPods lists the pods of Deployment ns/name, by its selector, oldest first.
func deploymentPods(t *testing.T, c client.Client, ns, deployment string) ([]corev1.Pod, error) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: deployment}, d); err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := c.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[i].CreationTimestamp.Before(&pods.Items[j].CreationTimestamp)
	})
	return pods.Items, nil
}

// processOf is the running process of pod's one container, or an error saying what the pod is doing.
func processOf(pod *corev1.Pod, deployment string) (podProcess, error) {
	p := podProcess{Namespace: pod.Namespace, Deployment: deployment, Name: pod.Name, UID: pod.UID}
	if pod.DeletionTimestamp != nil {
		return p, fmt.Errorf("pod %s is terminating", pod.Name)
	}
	if len(pod.Status.ContainerStatuses) != 1 {
		return p, fmt.Errorf("pod %s (%s) has %d container statuses, want 1", pod.Name, pod.Status.Phase, len(pod.Status.ContainerStatuses))
	}
	cs := pod.Status.ContainerStatuses[0]
	p.ContainerID, p.Restarts = cs.ContainerID, cs.RestartCount
	if cs.State.Running == nil || cs.ContainerID == "" {
		return p, fmt.Errorf("pod %s: container %s is not running (%+v)", pod.Name, cs.Name, cs.State)
	}
	pids := localnode.ContainerPIDs(cs.ContainerID)
	if len(pids) == 0 {
		return p, fmt.Errorf("pod %s: container %s has no process on the node", pod.Name, shortID(cs.ContainerID))
	}
	p.PID = pids[0]
	return p, nil
}

// waitOnlyPod waits until Deployment ns/name has exactly one pod, not terminating (the pods it replaced are gone),
// whose container runs, and returns it.
func waitOnlyPod(t *testing.T, c client.Client, ns, deployment string) podProcess {
	t.Helper()
	var only podProcess
	harness.Eventually(t, 2*time.Minute, func() error {
		pods, err := deploymentPods(t, c, ns, deployment)
		if err != nil {
			return err
		}
		if len(pods) != 1 {
			return fmt.Errorf("pods of %s/%s: %s, want one", ns, deployment, podNames(pods))
		}
		only, err = processOf(&pods[0], deployment)
		return err
	})
	return only
}

func podNames(pods []corev1.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, fmt.Sprintf("%s (%s, terminating: %t)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil))
	}
	return fmt.Sprint(names)
}

// checkSamePod checks that pod is still the only pod of its Deployment and runs the same process: on the node runner
// this compared the pid of a host process; on the real node it is the same pod (name and UID), the same container
// (CRI container ID, and the kubelet has not restarted it) and the same main process of that container.
func checkSamePod(t *testing.T, c client.Client, pod podProcess) {
	t.Helper()
	pods, err := deploymentPods(t, c, pod.Namespace, pod.Deployment)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Fatalf("pods of %s/%s: %s; want only %s: the renewal replaced the pod", pod.Namespace, pod.Deployment, podNames(pods), pod)
	}
	now, err := processOf(&pods[0], pod.Deployment)
	if err != nil || now != pod {
		t.Fatalf("pod of %s/%s: %s (%v); want %s: the renewal replaced the pod or its process", pod.Namespace, pod.Deployment, now, err, pod)
	}
	t.Logf("pod %s still runs the same process: %s", pod.Name, pod)
}

// containerFile reads a file as pod's container process sees it (through its mount namespace: /proc/<pid>/root).
func containerFile(pod podProcess, path string) ([]byte, error) {
	return os.ReadFile(filepath.Join("/proc", fmt.Sprint(pod.PID), "root", path))
}

// logPodsOnFailure logs the tail of the container logs of ns's pods (kept by the kubelet on the node) when the test
// has failed.
func logPodsOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dirs, _ := filepath.Glob(filepath.Join(localnode.RootDir, "pods", ns+"_*", "*", "*.log"))
		for _, path := range dirs {
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if len(data) > 3000 {
				data = data[len(data)-3000:]
			}
			t.Logf("---- %s (last 3000 bytes)\n%s", path, data)
		}
	})
}
