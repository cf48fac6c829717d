package alm_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// almProcess is ALM running as a process of its own, with every loop (--loops=all, as config/manager deploys it),
// as the cluster admin. Leader election is off: a single replica that is killed and started again would otherwise
// wait out the dead replica's Lease (15s) before reconciling, and the scenarios are about what ALM does then.
type almProcess struct {
	t          testing.TB
	kubeconfig string
	log        *os.File
	cmd        *exec.Cmd
	done       chan struct{}
	metrics    string
	starts     int
}

func startALM(t testing.TB, kubeconfig, logPath string) *almProcess {
	t.Helper()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p := &almProcess{t: t, kubeconfig: kubeconfig, log: log}
	p.start()
	t.Cleanup(func() {
		p.kill()
		_ = p.log.Close()
	})
	return p
}

// start starts a new ALM process (the previous one must be dead).
func (p *almProcess) start() {
	p.t.Helper()
	p.starts++
	p.metrics = freeAddr(p.t)
	fmt.Fprintf(p.log, "\n===== chaos: ALM start #%d at %s =====\n", p.starts, time.Now().Format(time.RFC3339Nano))
	p.cmd = exec.Command(almBin, "--kubeconfig", p.kubeconfig, "--loops", "all",
		"--metrics-bind-address", p.metrics, "--health-probe-bind-address", "0", "--namespace", "alm-system")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no ALM outlives a killed test
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting ALM: %v", err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
}

// kill kills ALM with SIGKILL, as the kernel's OOM killer or a node failure would, and waits until it is gone.
func (p *almProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	fmt.Fprintf(p.log, "===== chaos: ALM killed (SIGKILL) at %s =====\n", time.Now().Format(time.RFC3339Nano))
}

// writes is how many write requests (POST, PUT, PATCH, DELETE) this ALM process has sent to the API server so far,
// from its client-go metrics; an error while the process is not serving them yet.
func (p *almProcess) writes() (int, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("ALM metrics: %s", resp.Status)
	}
	return countWrites(resp.Body)
}

// countWrites sums the rest_client_requests_total samples whose method writes.
func countWrites(r io.Reader) (int, error) {
	total := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		write := false
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			write = write || strings.Contains(line, `method="`+m+`"`)
		}
		if !write {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("ALM metrics line %q: %w", line, err)
		}
		total += int(v)
	}
	return total, sc.Err()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
