package konnect

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/localkube"
)

// BenchmarkKonnectScale: 10,000 entities (10 control planes, each with 333 services, 333 routes and 333 consumers) synced
// by the konnect-operator running as a process (built from cmd/konnect-operator, default flags but for an unlimited
// Konnect rate and a Kubernetes client allowed 500 requests/s) against the simulator with 20ms latency. The objects
// are declared before the operator starts. Reported: rss-MB (the process's peak resident set, VmHWM, read at the
// end), s-to-programmed (from the start of the process), calls/entity-at-create, and calls/period-steady (Konnect
// calls per 30s sync period with no drift). KONNECT_BENCH_PROFILES=dir saves the process's heap profile there at the
// end.
//
//	go test -run '^$' -bench BenchmarkKonnectScale -benchtime 1x ./controllers/konnect/
func BenchmarkKonnectScale(b *testing.B) {
	if kubeAPI == nil {
		b.Skip("no local control plane (-short)")
	}
	bin := os.Getenv("KONNECT_OPERATOR_BIN") // e.g. a build of another commit, to compare
	if bin == "" {
		bin = buildOperator(b)
	}
	for range b.N {
		benchmarkScale(b, bin)
	}
}

func benchmarkScale(b *testing.B, bin string) {
	const (
		controlPlanes = 10
		perCP         = 333
		n             = controlPlanes * (1 + 3*perCP)
		period        = 30 * time.Second
	)
	sim := konnectsim.StartTest(b, konnectsim.Options{Latency: 20 * time.Millisecond})
	e := declareScale(b, sim, controlPlanes, perCP)
	metrics, pprof := freeAddress(b), freeAddress(b)
	op := startOperatorProcess(b, bin, e.ns, "--sync-period", period.String(), "--konnect-rate-limit", "0",
		"--kube-api-qps", "500", "--kube-api-burst", "1000", "--metrics-bind-address", metrics, "--pprof-bind-address", pprof)
	start := time.Now()
	e.eventually(15*time.Minute, "all Programmed", func() error {
		if err := op.alive(); err != nil {
			return err
		}
		if left := notProgrammedAll(e); left != 0 {
			time.Sleep(time.Second) // listing 10,000 objects costs the machine too
			return fmt.Errorf("%d of %d not Programmed", left, n)
		}
		return nil
	})
	took := time.Since(start)
	createCalls := sim.TotalRequests()

	sim.ResetCounters()
	waitFor(2 * period)
	steady := float64(sim.TotalRequests()) / 2
	rss, err := vmHWM(op.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	heap, err := heapInuseMB(metrics)
	if err != nil {
		b.Fatal(err)
	}
	if dir := os.Getenv("KONNECT_BENCH_PROFILES"); dir != "" {
		saveHeapProfile(b, pprof, filepath.Join(dir, "konnect-operator-heap.pprof"))
	}
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(heap, "heap-inuse-MB")
	b.ReportMetric(took.Seconds(), "s-to-programmed")
	b.ReportMetric(float64(createCalls)/n, "calls/entity-at-create")
	b.ReportMetric(steady, "calls/period-steady")
	b.Logf("%d entities Programmed in %s by the process, %d calls (%.2f per entity); steady state %.0f calls per %s period: %v; peak RSS %.0f MB, heap in use at the end %.0f MB",
		n, took.Round(time.Millisecond), createCalls, float64(createCalls)/n, steady, period, sim.Counters(), rss, heap)
}

// declareScale creates an auth configuration, controlPlanes control planes and perCP services, routes and
// consumers in each, from 16 goroutines, in a new namespace.
func declareScale(b *testing.B, sim *konnectsim.Server, controlPlanes, perCP int) *env {
	e := newScaleEnv(b, sim)
	e.create(authConfig("auth", sim.URL()))
	for i := range controlPlanes {
		e.create(controlPlaneObj(fmt.Sprintf("cp-%d", i), "auth"))
	}
	parallel(16, controlPlanes*perCP, func(i int) {
		cp := fmt.Sprintf("cp-%d", i%controlPlanes)
		svc := fmt.Sprintf("svc-%d", i)
		e.createAsync(serviceObj(svc, cp, svc+".example.com"))
		e.createAsync(routeObj(fmt.Sprintf("route-%d", i), svc))
		e.createAsync(&configurationv1.KongConsumer{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("consumer-%d", i)},
			Username:   fmt.Sprintf("user-%d", i),
			Spec:       configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef(cp)},
		})
	})
	if b.Failed() {
		b.FailNow()
	}
	return e
}

// newScaleEnv is an env for a benchmark: a client allowed 1,000 requests/s and a new namespace.
func newScaleEnv(b *testing.B, sim *konnectsim.Server) *env {
	scheme, err := NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	cfg := rest.CopyConfig(kubeAPI.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	e := &env{t: b, ctx: b.Context(), c: c, sim: sim, ns: fmt.Sprintf("konnect-scale-%d", nsSeq.Add(1))}
	if err := c.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		b.Fatal(err)
	}
	return e
}

// notProgrammedAll counts the control planes, services, routes and consumers of e's namespace that are not
// Programmed (-1 when they cannot be listed).
func notProgrammedAll(e *env) int {
	cps := &konnectv1alpha2.KonnectGatewayControlPlaneList{}
	svcs := &configurationv1alpha1.KongServiceList{}
	routes := &configurationv1alpha1.KongRouteList{}
	consumers := &configurationv1.KongConsumerList{}
	for _, l := range []client.ObjectList{cps, svcs, routes, consumers} {
		if err := e.c.List(e.ctx, l, client.InNamespace(e.ns)); err != nil {
			return -1
		}
	}
	left := 0
	count := func(conds []metav1.Condition) {
		if !programmed(conds) {
			left++
		}
	}
	for _, o := range cps.Items {
		count(o.Status.Conditions)
	}
	for _, o := range svcs.Items {
		count(o.Status.Conditions)
	}
	for _, o := range routes.Items {
		count(o.Status.Conditions)
	}
	for _, o := range consumers.Items {
		count(o.Status.Conditions)
	}
	return left
}

// buildOperator builds cmd/konnect-operator into a temporary directory.
func buildOperator(b *testing.B) string {
	root, err := localkube.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "konnect-operator")
	build := exec.Command("go", "build", "-o", bin, "./cmd/konnect-operator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building cmd/konnect-operator: %v\n%s", err, out)
	}
	return bin
}

// operatorProcess is the konnect-operator running as a process.
type operatorProcess struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startOperatorProcess runs bin against the local control plane, watching only namespace, with args; it is
// stopped when the benchmark ends. Its log goes to a file in the benchmark's temporary directory.
func startOperatorProcess(b *testing.B, bin, namespace string, args ...string) *operatorProcess {
	logPath := filepath.Join(b.TempDir(), "konnect-operator.log")
	log, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	args = append([]string{"--kubeconfig", kubeAPI.KubeconfigPath, "--health-probe-bind-address", "0",
		"--watch-namespaces", namespace}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &operatorProcess{cmd: cmd, done: make(chan error, 1), log: logPath}
	go func() { p.done <- cmd.Wait() }()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		_ = log.Close()
	})
	return p
}

// alive returns an error when the process has exited.
func (p *operatorProcess) alive() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("the konnect-operator exited: %w (log %s)", err, p.log)
	default:
		return nil
	}
}

// vmHWM is the peak resident set size of the process pid (VmHWM in /proc/<pid>/status), in MB.
func vmHWM(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		var kb float64
		if _, err := fmt.Sscanf(line, "VmHWM: %f kB", &kb); err == nil {
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// freeAddress returns a loopback address with a port free at the time of the call.
func freeAddress(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// heapInuseMB reads go_memstats_heap_inuse_bytes from the Prometheus endpoint at addr, in MB.
func heapInuseMB(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		var v float64
		if _, err := fmt.Sscanf(line, "go_memstats_heap_inuse_bytes %g", &v); err == nil {
			return v / (1 << 20), nil
		}
	}
	return 0, fmt.Errorf("no go_memstats_heap_inuse_bytes at %s", addr)
}

// saveHeapProfile writes the heap profile served at addr to path.
func saveHeapProfile(b *testing.B, addr, path string) {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
