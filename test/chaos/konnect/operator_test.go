package konnect

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/almproject/alm/test/localkube"
)

// operator is the Konnect operator running as a process (cmd/konnect-operator), which the scenario kills with
// SIGKILL and starts again.
type operator struct {
	t    *testing.T
	bin  string
	args []string
	log  *os.File

	cmd  *exec.Cmd
	done chan error
	// starts and kills count what happened to the process.
	starts, kills int
}

// buildOperator builds cmd/konnect-operator into a temporary directory, with the build tags given (the mutation's),
// and returns the binary's path.
func buildOperator(t *testing.T, tags ...string) string {
	t.Helper()
	root, err := localkube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "konnect-operator")
	build := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", bin, "./cmd/konnect-operator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/konnect-operator: %v\n%s", err, out)
	}
	return bin
}

// newOperator prepares the process; its log (every run, appended) goes to logPath.
func newOperator(t *testing.T, bin, logPath string, args ...string) *operator {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	p := &operator{t: t, bin: bin, args: args, log: log}
	t.Cleanup(func() {
		p.stop()
		_ = log.Close()
	})
	return p
}

// start runs the operator.
func (p *operator) start() {
	p.t.Helper()
	p.starts++
	fmt.Fprintf(p.log, "===== start %d at %s\n", p.starts, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// Its own process group: a signal meant for the test (Ctrl-C) does not reach it twice.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting the konnect-operator: %v", err)
	}
	p.cmd, p.done = cmd, make(chan error, 1)
	go func() { p.done <- cmd.Wait() }()
}

// running says whether the process is alive (it did not exit on its own).
func (p *operator) running() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("the konnect-operator exited: %w (log: %s)", err, p.log.Name())
	default:
		return nil
	}
}

// kill sends SIGKILL (no chance to clean up: leases, in-flight requests and unwritten status are lost) and waits
// until the process is gone.
func (p *operator) kill() {
	p.t.Helper()
	if err := p.running(); err != nil {
		p.t.Fatal(err)
	}
	p.kills++
	fmt.Fprintf(p.log, "===== SIGKILL %d at %s\n", p.kills, time.Now().Format(time.RFC3339Nano))
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("killing the konnect-operator: %v", err)
	}
	<-p.done
	p.cmd = nil
}

// stop ends the process (SIGTERM, then SIGKILL after 10s), if it runs.
func (p *operator) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}
