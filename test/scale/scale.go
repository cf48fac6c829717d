// Package scale measures ALM at scale with real components: a local control plane (etcd, kube-apiserver and
// kube-controller-manager), ALM built from cmd/alm and run as a process, a directory catalog of real registry+v1
// bundles, and many AppTypes across many namespaces. There is no kubelet: the harness marks Deployments available as
// they appear. It reports ALM's memory (RSS and heap), its reconciles, the API requests it made (from a
// kube-apiserver audit log restricted to ALM's user), and how long after the last Deployment became available every
// install was Succeeded.
package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	hackimages "github.com/almproject/alm/hack/images"
	"github.com/almproject/alm/test/harness"
	"github.com/almproject/alm/test/localkube"
)

// Options size a run.
type Options struct {
	// Namespaces, each with PerNamespace AppTypes of distinct packages, from a catalog of Packages packages.
	Namespaces, PerNamespace, Packages int
	// ALMArgs are extra flags for the ALM process.
	ALMArgs []string
	// ALMEnv are extra KEY=VALUE settings of the ALM process's environment (GOGC, GODEBUG=memprofilerate=...),
	// which the other processes of the run do not get.
	ALMEnv []string
	// HeapProfile is the file the run writes ALM's heap profile (/debug/pprof/heap) to at the end, before it stops
	// ALM (ALM_SCALE_HEAP_PROFILE); a temporary file when empty.
	HeapProfile string
	// PeakProfiles also saves ALM's heap profile at each new peak of its heap (ALM_SCALE_PEAK_PROFILES=1), to tell
	// what a peak is made of. Off by default: writing a profile allocates in ALM and maps the executable's symbol
	// tables, so it raises the peak resident memory the run reports.
	PeakProfiles bool
	// Upgrade adds the third workflow once every install is Ready: publish 2.0.0 of every package, replacing the
	// installed 1.0.0, and measure until every AppType runs it and every 1.0.0 OperatorVersion is gone
	// (Result.Upgrade). The installs' requests and peak RSS end at the publish.
	Upgrade bool
	// Rollout is the CatalogSource's spec.rollout: the upgrade goes out in its waves (nil: all at once).
	Rollout *operatorsv1alpha1.RolloutPolicy
	// Timeout bounds the whole run after the cluster started.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Installs is the number of AppTypes a run creates.
func (o Options) Installs() int { return o.Namespaces * o.PerNamespace }

// Result is what a run measured.
type Result struct {
	// Installs is the number of AppTypes; Succeeded how many of their OperatorVersions were Succeeded and Ready how
	// many AppTypes were Ready at the end.
	Installs, Succeeded, Ready int
	// ObjectsPerInstall is how many objects one install applies.
	ObjectsPerInstall int
	// RSS and PeakRSS are ALM's resident set size at the end (VmRSS) and at its peak (VmHWM), in bytes.
	RSS, PeakRSS float64
	// Heap and PeakHeap are ALM's go_memstats_heap_alloc_bytes at the end and the highest sampled.
	Heap, PeakHeap float64
	// Memory is what ALM's resident memory at the end is for (MemoryUses).
	Memory map[string]float64
	// Reconciles are controller_runtime_reconcile_total by controller.
	Reconciles map[string]float64
	// Requests are ALM's API requests by verb and resource, from start-up until the end of the run.
	Requests Requests
	// Converged is from the first AppType created to every OperatorVersion Succeeded; AfterAvailable is from the
	// last Deployment marked available to every OperatorVersion Succeeded.
	Converged, AfterAvailable time.Duration
	// Upgrade is the upgrade phase's figures (Options.Upgrade), nil without one.
	Upgrade *UpgradeResult
}

// RequestsPerInstall is ALM's API requests divided by the installs.
func (r *Result) RequestsPerInstall() float64 {
	return float64(r.Requests.Total()) / float64(r.Installs)
}

// RequestsPerInstallWithoutEvents leaves out the Events ALM records for users.
func (r *Result) RequestsPerInstallWithoutEvents() float64 {
	return float64(r.Requests.Total()-r.Requests.Events()) / float64(r.Installs)
}

// CostPerInstall is what an install costs in API requests: every request but what ALM does once whatever the
// number of installs (the informers' lists and watches, API discovery, syncing the catalog, its own ClusterRole),
// divided by the installs.
func (r *Result) CostPerInstall() float64 {
	return r.InstallRequestsPerInstall() + float64(r.Requests.Events())/float64(r.Installs)
}

// InstallRequestsPerInstall counts what an install costs: every request but the Events and what ALM does once
// whatever the number of installs (the informers' lists and watches, API discovery, syncing the catalog, its own
// ClusterRole), divided by the installs.
func (r *Result) InstallRequestsPerInstall() float64 {
	once := r.Requests.Verb("list") + r.Requests.Verb("watch")
	for k, n := range r.Requests {
		if strings.HasPrefix(k, "get /") || strings.Contains(k, " catalogsources.") || strings.HasSuffix(k, ownObject) {
			once += n
		}
	}
	return float64(r.Requests.Total()-r.Requests.Events()-once) / float64(r.Installs)
}

// ReconcilesPerInstall is the reconciles of every controller divided by the installs.
func (r *Result) ReconcilesPerInstall() float64 {
	total := 0.0
	for _, n := range r.Reconciles {
		total += n
	}
	return total / float64(r.Installs)
}

// ALM's identity: a ServiceAccount, so that its requests are told apart from the harness's in the audit log.
const (
	almNamespace = "alm-system"
	almAccount   = "alm"
	almUser      = "system:serviceaccount:" + almNamespace + ":" + almAccount
	catalogName  = "scale"
)

// run is one run's state.
type run struct {
	o       Options
	root    string
	cp      *localkube.Cluster
	admin   client.Client
	work    string // temporary directory: ALM's binary, its log, the catalog, the audit log
	alm     *exec.Cmd
	almDone chan error
	metrics string
	pprof   string // ALM's heap profile endpoint
	// auditMark is the audit log's size at the upgrade's publish: the upgrade's requests are after it.
	auditMark int64
	peakHeap  float64
	// peakProfile is the suffix of the heap profile file written at the peak of the phase under way.
	peakProfile string
	mu          sync.Mutex
}

// Run starts a cluster and ALM, installs o.Installs() AppTypes, waits until every one is Succeeded, and measures.
func Run(ctx context.Context, o Options) (_ *Result, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	ctrllog.SetLogger(logr.Discard()) // the harness's informers log through controller-runtime
	r := &run{o: o}
	if r.root, err = localkube.RepoRoot(); err != nil {
		return nil, err
	}
	if r.work, err = os.MkdirTemp("", "alm-scale-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\nALM log (last 4000 bytes):\n%s", err, r.almLogTail(4000))
		}
		r.stop()
		if os.Getenv("ALM_SCALE_KEEP") == "1" {
			r.logf("kept the run's files (audit log, ALM's log, profiles) in %s", r.work)
			return
		}
		_ = os.RemoveAll(r.work)
	}()
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	return r.measure(ctx)
}

// start brings up the cluster with an audit log of ALM's requests, the catalog and ALM.
func (r *run) start(ctx context.Context) error {
	policy := filepath.Join(r.work, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy(almUser)), 0o600); err != nil {
		return err
	}
	r.logf("starting the local cluster")
	cp, err := localkube.Start(localkube.Options{
		CRDDirectoryPaths: []string{filepath.Join(r.root, "config", "crd", "bases")},
		APIServerFlags: map[string]string{
			"audit-policy-file": policy, "audit-log-path": r.auditPath(), "audit-log-format": "json", "audit-log-mode": "blocking",
			// One file however long the run: the log rotates at 100 MB by default (0 means that default too), and
			// the requests are counted in this file only; ten thousand installs write about 130 MB.
			"audit-log-maxsize": "1000000",
		},
	})
	if err != nil {
		return err
	}
	r.cp = cp
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	if r.admin, err = client.New(cfg, client.Options{Scheme: harness.Scheme()}); err != nil {
		return err
	}
	r.logf("building ALM and writing a catalog of %d packages", r.o.Packages)
	// ALM is built as its image ships it (static, -trimpath, -s -w): the executable's resident pages are part of its
	// memory, and a build with cgo and symbols maps about 3 MB more of them. The linker writes the file: a copy
	// written in one piece sits in the page cache in large folios, and the kernel then maps about 16 MB more of it.
	bin := filepath.Join(r.work, "alm")
	if err := hackimages.BuildBinaryFile(ctx, r.root, "./cmd/alm", "scale", runtime.GOARCH, bin); err != nil {
		return err
	}
	if err := WriteCatalog(filepath.Join(r.work, "catalog"), r.o.Packages); err != nil {
		return err
	}
	kubeconfig, err := r.almIdentity(ctx)
	if err != nil {
		return err
	}
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: almNamespace, Name: catalogName},
		Spec: operatorsv1alpha1.CatalogSourceSpec{Directory: &operatorsv1alpha1.DirectorySource{Path: filepath.Join(r.work, "catalog")},
			Rollout: r.o.Rollout}}
	if err := r.admin.Create(ctx, cs); err != nil {
		return err
	}
	return r.startALM(bin, kubeconfig)
}

// almIdentity creates ALM's ServiceAccount, bound to cluster-admin, and writes a kubeconfig for it under the
// cluster's directory (so the cluster's watchdog also stops ALM if this process dies).
func (r *run) almIdentity(ctx context.Context) (string, error) {
	cfg, err := r.cp.ServiceAccountConfig(ctx, almNamespace, almAccount)
	if err != nil {
		return "", err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alm-scale"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: almAccount, Namespace: almNamespace}},
	}
	if err := r.admin.Create(ctx, crb); err != nil {
		return "", err
	}
	path := filepath.Join(r.cp.Dir, "alm.kubeconfig")
	return path, localkube.WriteKubeconfig(cfg, path)
}

func (r *run) startALM(bin, kubeconfig string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	r.metrics = "http://" + port + "/metrics"
	pport, err := freePort()
	if err != nil {
		return err
	}
	r.pprof = "http://" + pport + "/debug/pprof/heap"
	profiling := []string{"--pprof-bind-address=" + pport}
	if r.o.HeapProfile == "" {
		r.o.HeapProfile = filepath.Join(r.work, "heap.pb.gz")
	}
	logFile, err := os.Create(r.almLogPath())
	if err != nil {
		return err
	}
	// Plain HTTP on a loopback port (--metrics-secure=false, which ALM warns about): the run reads ALM's metrics every
	// second or so, and HTTPS with a TokenReview and SubjectAccessReview per new connection would add ALM CPU and API
	// requests the figures would count as the installs'.
	args := append([]string{"--kubeconfig=" + kubeconfig, "--namespace=" + almNamespace,
		"--metrics-bind-address=" + port, "--metrics-secure=false", "--health-probe-bind-address=0"}, append(profiling, r.o.ALMArgs...)...)
	if r.o.Upgrade {
		// The catalog is a directory, polled: read it every 2s so that the publish is seen at once, as a ConfigMap
		// catalog's (watched) would be, and the upgrade's time is ALM's, not the poll's.
		args = append(args, "--catalog-resync=2s")
	}
	r.logf("starting ALM %s", strings.Join(append(slices.Clone(r.o.ALMEnv), r.o.ALMArgs...), " "))
	r.alm = exec.Command(bin, args...)
	if len(r.o.ALMEnv) > 0 {
		r.alm.Env = append(os.Environ(), r.o.ALMEnv...)
	}
	r.alm.Stdout, r.alm.Stderr = logFile, logFile
	if err := r.alm.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting ALM: %w", err)
	}
	r.almDone = make(chan error, 1)
	go func() {
		r.almDone <- r.alm.Wait()
		_ = logFile.Close()
	}()
	return nil
}

// stopALM stops ALM (SIGTERM, then SIGKILL after 10s); it may be called more than once.
func (r *run) stopALM() {
	if r.alm == nil {
		return
	}
	_ = r.alm.Process.Signal(os.Interrupt)
	select {
	case <-r.almDone:
	case <-time.After(10 * time.Second):
		_ = r.alm.Process.Kill()
		<-r.almDone
	}
	r.alm = nil
}

func (r *run) stop() {
	r.stopALM()
	if r.cp != nil {
		if err := r.cp.Stop(); err != nil {
			r.logf("stopping the cluster: %v", err)
		}
	}
}

func (r *run) auditPath() string  { return filepath.Join(r.work, "audit.log") }
func (r *run) almLogPath() string { return filepath.Join(r.work, "alm.log") }

func (r *run) almLogTail(n int64) string {
	f, err := os.Open(r.almLogPath())
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	return string(data)
}

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.o.Log, "%s scale: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// Size reads a run's size from the environment (ALM_SCALE_NAMESPACES, ALM_SCALE_PER_NAMESPACE,
// ALM_SCALE_PACKAGES) over the defaults in o, extra ALM flags from ALM_SCALE_ALM_ARGS, extra settings of ALM's
// environment from ALM_SCALE_ALM_ENV (both space-separated) and PeakProfiles from ALM_SCALE_PEAK_PROFILES=1.
func Size(o Options) (Options, error) {
	for env, field := range map[string]*int{
		"ALM_SCALE_NAMESPACES": &o.Namespaces, "ALM_SCALE_PER_NAMESPACE": &o.PerNamespace, "ALM_SCALE_PACKAGES": &o.Packages,
	} {
		if v := os.Getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("%s=%q: want a positive number", env, v)
			}
			*field = n
		}
	}
	o.HeapProfile = os.Getenv("ALM_SCALE_HEAP_PROFILE")
	if v := os.Getenv("ALM_SCALE_ALM_ARGS"); v != "" {
		o.ALMArgs = append(o.ALMArgs, strings.Fields(v)...)
	}
	if v := os.Getenv("ALM_SCALE_ALM_ENV"); v != "" {
		o.ALMEnv = append(o.ALMEnv, strings.Fields(v)...)
	}
	if os.Getenv("ALM_SCALE_PEAK_PROFILES") == "1" {
		o.PeakProfiles = true
	}
	if o.PerNamespace > o.Packages {
		return o, errors.New("each namespace installs distinct packages: ALM_SCALE_PER_NAMESPACE must not exceed ALM_SCALE_PACKAGES")
	}
	return o, nil
}
