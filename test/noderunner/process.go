package noderunner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/almproject/alm/test/noderunner/deploystatus"
)

const (
	// backoffStart and backoffMax bound the wait before a container that exited is started again (CrashLoopBackOff).
	backoffStart = time.Second
	backoffMax   = 30 * time.Second
	// backoffReset: a process that ran this long before exiting is restarted at once, as a kubelet resets its backoff.
	backoffReset = time.Minute
	// logTailLines is how many of its last log lines a crashing container reports in the Deployment's condition.
	logTailLines = 10
)

// exitInfo is how a container's last process ended.
type exitInfo struct {
	code    int
	at      time.Time
	logTail []string
	err     string // the process could not be started
	killed  string // why the runner killed it (a failed liveness probe)
}

// container runs one container of a pod as a host process and restarts it with backoff when it exits.
type container struct {
	name     string
	exe      string   // the host path of the entrypoint
	argv     []string // argv[0] is the entrypoint as the image names it
	env      []string
	dir      string
	logPath  string
	probe    prober
	liveness *prober // nil: no liveness probe
	grace    time.Duration
	// maxBackoff caps the restart backoff (backoffMax unless the runner's options lower it).
	maxBackoff time.Duration
	log        logr.Logger
	notify     func()

	mu         sync.Mutex
	pid        int
	running    bool
	ready      bool
	readySince time.Time
	restarts   int
	lastExit   *exitInfo
	crashing   bool // exited since it was last ready
}

// supervise runs the container until ctx ends, restarting it with exponential backoff.
func (c *container) supervise(ctx context.Context) {
	backoff := min(backoffStart, c.maxBackoff)
	for {
		started := time.Now()
		exit := c.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.lastExit, c.crashing, c.ready, c.running, c.pid = exit, true, false, false, 0
		c.restarts++
		c.mu.Unlock()
		if time.Since(started) > backoffReset {
			backoff = min(backoffStart, c.maxBackoff)
		}
		c.log.Info("Container exited; restarting after backoff", "exitCode", exit.code, "error", exit.err, "backoff", backoff)
		c.notify()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, c.maxBackoff)
	}
}

// runOnce starts the process, probes it while it runs and returns how it ended. When ctx ends, or its liveness
// probe fails, it stops the process: SIGTERM to its process group, SIGKILL after the grace period.
func (c *container) runOnce(ctx context.Context) *exitInfo {
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return &exitInfo{code: -1, at: time.Now(), err: err.Error()}
	}
	defer logFile.Close()
	offset, _ := logFile.Seek(0, io.SeekEnd)
	cmd := exec.Command(c.exe, c.argv[1:]...)
	cmd.Args[0] = c.argv[0]
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = c.env, c.dir, logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return &exitInfo{code: -1, at: time.Now(), err: err.Error()}
	}
	c.mu.Lock()
	c.pid, c.running = cmd.Process.Pid, true
	c.mu.Unlock()
	c.log.Info("Container started", "pid", cmd.Process.Pid, "log", c.logPath)
	c.notify()

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go c.probeLoop(probeCtx)
	unhealthy := make(chan string, 1)
	if c.liveness != nil {
		go c.livenessLoop(probeCtx, unhealthy)
	}

	select {
	case err := <-done:
		return &exitInfo{code: exitCode(err), at: time.Now(), logTail: tail(c.logPath, offset, logTailLines)}
	case reason := <-unhealthy:
		c.log.Info("Liveness probe failed; restarting the container", "reason", reason)
		err := c.terminate(cmd.Process.Pid, done)
		return &exitInfo{code: exitCode(err), at: time.Now(), killed: reason, logTail: tail(c.logPath, offset, logTailLines)}
	case <-ctx.Done():
		_ = c.terminate(cmd.Process.Pid, done)
		return &exitInfo{code: -1, at: time.Now()}
	}
}

// livenessLoop reports on unhealthy once the liveness probe has failed failureThreshold times in a row.
func (c *container) livenessLoop(ctx context.Context, unhealthy chan<- string) {
	p := c.liveness
	if !sleepCtx(ctx, p.initialDelay) {
		return
	}
	failures := 0
	for {
		if err := p.check(ctx); err != nil && ctx.Err() == nil {
			if failures++; failures >= p.failureThreshold {
				unhealthy <- fmt.Sprintf("liveness probe failed %d times: %v", failures, err)
				return
			}
		} else {
			failures = 0
		}
		if !sleepCtx(ctx, p.period) {
			return
		}
	}
}

// terminate sends SIGTERM to the process group and SIGKILL after the grace period, and waits for the process.
func (c *container) terminate(pid int, done <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	var err error
	select {
	case err = <-done:
	case <-time.After(c.grace):
		c.log.Info("Container did not stop within its grace period; killing it", "pid", pid, "grace", c.grace)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		err = <-done
	}
	// Whatever the process left behind in its group goes too.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	c.mu.Lock()
	c.pid, c.running, c.ready = 0, false, false
	c.mu.Unlock()
	c.log.Info("Container stopped", "pid", pid)
	return err
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// tail returns the last n lines written to path after offset.
func tail(path string, offset int64, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines
}

// probeLoop keeps c.ready up to date from the readiness probe while the process runs.
func (c *container) probeLoop(ctx context.Context) {
	p := c.probe
	if !sleepCtx(ctx, p.initialDelay) {
		return
	}
	successes, failures := 0, 0
	for {
		if err := p.check(ctx); err != nil {
			successes, failures = 0, failures+1
			if failures >= p.failureThreshold {
				c.setReady(false)
			}
			if failures == 1 {
				c.log.V(1).Info("Readiness probe failed", "error", err.Error())
			}
		} else {
			successes, failures = successes+1, 0
			if successes >= p.successThreshold {
				c.setReady(true)
			}
		}
		if !sleepCtx(ctx, p.period) {
			return
		}
	}
}

func (c *container) setReady(ready bool) {
	c.mu.Lock()
	changed := c.ready != ready
	c.ready = ready
	if changed && ready {
		c.readySince, c.crashing = time.Now(), false
	}
	c.mu.Unlock()
	if changed {
		c.log.Info("Container readiness changed", "ready", ready)
		c.notify()
	}
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ContainerInfo is a snapshot of one container of a local pod.
type ContainerInfo struct {
	// Name is the container's name.
	Name string
	// PID is the running process's id, 0 when none runs.
	PID int
	// Ready says the readiness probe passes (or, without a probe, the process has run for a second).
	Ready bool
	// Restarts counts how often the process exited and was started again.
	Restarts int
	// LastExitCode is the exit code of the last process that exited (-1 when it could not start), if any.
	LastExitCode *int
	// LogPath is the file that receives the process's stdout and stderr.
	LogPath string
}

func (c *container) info() ContainerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := ContainerInfo{Name: c.name, PID: c.pid, Ready: c.ready, Restarts: c.restarts, LogPath: c.logPath}
	if c.lastExit != nil {
		code := c.lastExit.code
		ci.LastExitCode = &code
	}
	return ci
}

// problem describes why the container is not serving, nil when nothing is wrong.
func (c *container) problem() *deploystatus.Problem {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.crashing || c.lastExit == nil {
		return nil
	}
	e := c.lastExit
	msg := fmt.Sprintf("container %q exited with exit code %d (restarts: %d)", c.name, e.code, c.restarts)
	switch {
	case e.err != "":
		msg = fmt.Sprintf("container %q could not start: %s (restarts: %d)", c.name, e.err, c.restarts)
	case e.killed != "":
		msg = fmt.Sprintf("container %q was killed, exit code %d: %s (restarts: %d)", c.name, e.code, e.killed, c.restarts)
	}
	if len(e.logTail) > 0 {
		msg += "; last log lines:\n" + strings.Join(e.logTail, "\n")
	}
	return &deploystatus.Problem{Reason: deploystatus.ReasonCrashLoopBackOff, Message: msg}
}
