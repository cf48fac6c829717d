package alm_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/localnode"
	"github.com/almproject/alm/test/metricstest"
)

// auditPolicy records ALM's writes, and nothing else, at the end of each request. Lease renewals (every 2s under
// --leader-elect) are left out: a write counts when ALM acts on an install or upgrade. So are the TokenReviews and
// SubjectAccessReviews ALM creates to check who scrapes its /metrics (and before an install): they are questions
// to the API server, not writes.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: None
  resources: [{group: authentication.k8s.io, resources: [tokenreviews]}, {group: authorization.k8s.io, resources: [subjectaccessreviews]}]
- level: Metadata
  users: ["` + almUser + `"]
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

func auditPath() string { return filepath.Join(stateDir, "audit.log") }

// almContainer is the container of ALM's Deployment in config/manager.
const almContainer = "manager"

// almPod is ALM as config/default deploys it: the one pod of the Deployment alm-system/alm-manager, its container
// run by the node's kubelet and containerd with the ServiceAccount's token. SIGKILL goes to the container's process;
// the kubelet starts the container again under the pod's restartPolicy Always.
type almPod struct {
	t testing.TB

	mu      sync.Mutex
	offset  int64 // how much of the audit log has been counted
	written int
}

// container is ALM's running pod and the status of its manager container.
func (a *almPod) container() (*corev1.Pod, corev1.ContainerStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(localenv.ALMNamespace)); err != nil {
		return nil, corev1.ContainerStatus{}, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || !strings.HasPrefix(p.Name, localenv.ALMDeployment+"-") {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == almContainer {
				return p, c, nil
			}
		}
	}
	return nil, corev1.ContainerStatus{}, fmt.Errorf("no pod of %s/%s runs its %s container", localenv.ALMNamespace, localenv.ALMDeployment, almContainer)
}

// pid is the main process of a running container, found through its cgroup on the node.
func pid(c corev1.ContainerStatus) (int, error) {
	if c.State.Running == nil || c.ContainerID == "" {
		return 0, fmt.Errorf("ALM's container is not running (restarts %d, state %+v)", c.RestartCount, c.State)
	}
	pids := localnode.ContainerPIDs(c.ContainerID)
	if len(pids) == 0 {
		return 0, fmt.Errorf("ALM's container %s has no process on the node", c.ContainerID)
	}
	return pids[0], nil
}

// kill sends SIGKILL to ALM's process, as the kernel's OOM killer would, waits until the kubelet has seen it exit,
// and returns its pid.
func (a *almPod) kill() (int, error) {
	_, c, err := a.container()
	if err != nil {
		return 0, err
	}
	p, err := pid(c)
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("SIGKILL to ALM (pid %d): %w", p, err)
	}
	return p, localPoll(30*time.Second, func() error {
		if _, now, err := a.container(); err != nil || now.RestartCount > c.RestartCount || now.ContainerID != c.ContainerID {
			return err
		}
		return fmt.Errorf("the kubelet has not seen ALM (pid %d) exit", p)
	})
}

// restarted waits until the kubelet runs ALM again, a process other than old.
func (a *almPod) restarted(old int) error {
	return localPoll(time.Minute, func() error {
		_, c, err := a.container()
		if err != nil {
			return err
		}
		p, err := pid(c)
		if err != nil {
			return fmt.Errorf("the kubelet has not started ALM again after pid %d (restarts %d): %w", old, c.RestartCount, err)
		}
		if p == old {
			return fmt.Errorf("the kubelet has not started ALM again after pid %d (restarts %d)", old, c.RestartCount)
		}
		return nil
	})
}

// restarts is how often the kubelet has started ALM's container again.
func (a *almPod) restarts() int {
	_, c, err := a.container()
	if err != nil {
		a.t.Fatal(err)
	}
	return int(c.RestartCount)
}

// logPath is the directory of ALM's container logs on the node (one file per restart), or `kubectl logs`.
func (a *almPod) logPath() string {
	p, _, err := a.container()
	if err != nil {
		return filepath.Join(localnode.RootDir, "pods")
	}
	return filepath.Join(localnode.RootDir, "pods", p.Namespace+"_"+p.Name+"_"+string(p.UID), almContainer)
}

// leading says whether the running ALM holds its leader election Lease (its metrics at the pod's address, read as
// Prometheus reads them: HTTPS, with a token bound to alm-metrics-reader).
func (a *almPod) leading() (bool, error) {
	p, c, err := a.container()
	if err != nil || c.State.Running == nil || p.Status.PodIP == "" {
		return false, err
	}
	token, err := env.MetricsToken(context.Background())
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, body, err := metricstest.Get(ctx, localenv.ALMMetricsURL(p.Status.PodIP), token)
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, fmt.Errorf("ALM's metrics: HTTP %d: %.200s", status, body)
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "leader_election_master_status{") {
			return strings.HasSuffix(line, " 1"), nil
		}
	}
	return false, sc.Err()
}

// waitLeading waits until the running ALM holds the Lease and returns how long that took from start.
func (a *almPod) waitLeading(start time.Time) (time.Duration, error) {
	err := localPoll(time.Minute, func() error {
		if ok, err := a.leading(); err != nil || ok {
			return err
		}
		return errors.New("ALM does not hold its leader election Lease")
	})
	return time.Since(start), err
}

// writes is how many writes (create, update, patch, delete) ALM's ServiceAccount has made so far, all its processes
// together, Lease renewals left out: the lines kube-apiserver's audit log holds.
func (a *almPod) writes() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(auditPath())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	if last := bytes.LastIndexByte(data, '\n'); last >= 0 { // a line being written is counted once it is whole
		a.written += bytes.Count(data[:last+1], []byte{'\n'})
		a.offset += int64(last + 1)
	}
	return a.written, nil
}
