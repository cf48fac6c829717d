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

	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/metricstest"
	"github.com/almproject/alm/test/noderunner"
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

// almPod is ALM as config/default deploys it: the one pod of the Deployment alm-system/alm-manager, its container a
// process the node runner started, with the ServiceAccount's token. SIGKILL goes to that process; the node runner
// starts it again as a kubelet does for restartPolicy Always.
type almPod struct {
	t testing.TB

	mu      sync.Mutex
	offset  int64 // how much of the audit log has been counted
	written int
}

// container is the running ALM pod and its manager container, as the node runner reports them.
func (a *almPod) container() (noderunner.PodInfo, noderunner.ContainerInfo, error) {
	for _, p := range env.Runner.Pods() {
		if p.Namespace != localenv.ALMNamespace || p.Deployment != localenv.ALMDeployment || p.Terminating {
			continue
		}
		for _, c := range p.Containers {
			if c.Name == almContainer {
				return p, c, nil
			}
		}
	}
	return noderunner.PodInfo{}, noderunner.ContainerInfo{}, fmt.Errorf("the node runner runs no pod of %s/%s", localenv.ALMNamespace, localenv.ALMDeployment)
}

// kill sends SIGKILL to ALM's process, as the kernel's OOM killer or a node failure would, waits until the node
// runner has seen it exit, and returns its pid.
func (a *almPod) kill() (int, error) {
	_, c, err := a.container()
	if err != nil {
		return 0, err
	}
	if c.PID == 0 {
		return 0, fmt.Errorf("ALM's container is not running (restarts %d)", c.Restarts)
	}
	if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("SIGKILL to ALM (pid %d): %w", c.PID, err)
	}
	return c.PID, localPoll(10*time.Second, func() error {
		if _, now, err := a.container(); err != nil || now.Restarts > c.Restarts {
			return err
		}
		return fmt.Errorf("the node runner has not seen ALM (pid %d) exit", c.PID)
	})
}

// restarted waits until the node runner runs ALM again, a process other than pid.
func (a *almPod) restarted(pid int) error {
	return localPoll(time.Minute, func() error {
		_, c, err := a.container()
		if err != nil {
			return err
		}
		if c.PID == 0 || c.PID == pid {
			return fmt.Errorf("the node runner has not started ALM again after pid %d (restarts %d)", pid, c.Restarts)
		}
		return nil
	})
}

// restarts is how often the node runner has started ALM's container again.
func (a *almPod) restarts() int {
	_, c, err := a.container()
	if err != nil {
		a.t.Fatal(err)
	}
	return c.Restarts
}

// logPath is ALM's log (stdout and stderr of every process of its container).
func (a *almPod) logPath() string {
	_, c, err := a.container()
	if err != nil {
		return filepath.Join(stateDir, "env", "noderunner", "pods", localenv.ALMNamespace)
	}
	return c.LogPath
}

// leading says whether the running ALM holds its leader election Lease (its metrics, on the port the node runner
// mapped its metrics port to, read as Prometheus reads them: HTTPS, with a token bound to alm-metrics-reader).
func (a *almPod) leading() (bool, error) {
	p, c, err := a.container()
	if err != nil || c.PID == 0 {
		return false, err
	}
	port, ok := p.Ports[localenv.ALMMetricsPort]
	if !ok {
		return false, errors.New("ALM's pod has no metrics port")
	}
	token, err := env.MetricsToken(context.Background())
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, body, err := metricstest.Get(ctx, localenv.ALMMetricsURL(port), token)
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
