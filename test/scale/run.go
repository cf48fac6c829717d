package scale

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/harness"
)

// settle is how long the run waits after the last install is Ready before it measures, so that the requests and
// reconciles an install causes after it converged (late events, requeues) are counted too.
const settle = 5 * time.Second

// measure waits for the catalog, creates the AppTypes, waits until all are Succeeded and Ready, and measures.
func (r *run) measure(ctx context.Context) (*Result, error) {
	if err := r.waitCatalog(ctx); err != nil {
		return nil, err
	}
	informers, err := cache.New(r.cp.Config, cache.Options{Scheme: harness.Scheme()})
	if err != nil {
		return nil, err
	}
	go func() { _ = informers.Start(ctx) }()
	k, err := runKubelet(ctx, informers, r.admin, 4)
	if err != nil {
		return nil, err
	}
	if _, err := informers.GetInformer(ctx, &operatorsv1alpha1.OperatorVersion{}); err != nil {
		return nil, err
	}
	r.peakProfile = ".peak"
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go r.sampleHeap(sampleCtx)

	start := time.Now()
	if err := r.createAppTypes(ctx); err != nil {
		return nil, err
	}
	res := &Result{Installs: r.o.Installs(), ObjectsPerInstall: ObjectsPerBundle}
	if err := r.waitSucceeded(ctx, informers, res); err != nil {
		return nil, err
	}
	done := time.Now()
	marked, last := k.last()
	res.Converged, res.AfterAvailable = done.Sub(start), done.Sub(last)
	r.logf("all %d OperatorVersions Succeeded %.1fs after the first AppType, %.1fs after the last of %d Deployments was marked available",
		res.Succeeded, res.Converged.Seconds(), res.AfterAvailable.Seconds(), marked)
	if err := r.waitReady(ctx, informers, res); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	if r.o.Upgrade {
		// The installs' figures end here: the upgrade phase resets the peak and marks the audit log.
		if res.RSS, res.PeakRSS, err = procMemory(r.alm.Process.Pid); err != nil {
			return nil, err
		}
		// In the log too: a run whose upgrades then time out still tells what the installs took.
		r.logf("installs done: ALM's RSS %.1f MB, peak %.1f MB (VmHWM)", res.RSS/1e6, res.PeakRSS/1e6)
		r.mu.Lock()
		r.peakProfile = ".upgrade-peak"
		r.mu.Unlock()
		if err := r.upgrade(ctx, informers, k, res); err != nil {
			return nil, err
		}
		time.Sleep(settle)
	}
	stopSampling()
	return res, r.collect(ctx, res)
}

// collect reads ALM's metrics and memory, stops it, and counts its requests in the audit log.
func (r *run) collect(ctx context.Context, res *Result) error {
	m, err := scrape(ctx, r.metrics)
	if err != nil {
		return err
	}
	res.Heap = m.Sum("go_memstats_heap_alloc_bytes")
	r.mu.Lock()
	res.PeakHeap = max(r.peakHeap, res.Heap)
	r.mu.Unlock()
	res.Reconciles = map[string]float64{}
	for k, v := range m {
		if name, ok := labelValue(k, "controller_runtime_reconcile_total", "controller"); ok {
			res.Reconciles[name] += v
		}
	}
	if res.Upgrade != nil {
		_, res.Upgrade.PeakRSS, err = procMemory(r.alm.Process.Pid)
	} else {
		res.RSS, res.PeakRSS, err = procMemory(r.alm.Process.Pid)
	}
	if err != nil {
		return err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.alm.Process.Pid))
	if err != nil {
		return err
	}
	// gc=1: a collection first, so that the profile holds what is live now. Without it the profile is of the last
	// collection, which at the end of the 10,000 installs ran amid reconciles: their garbage of the moment (most of
	// it the installer's policy check, then) counted as live, under "catalogs" and "reconciles".
	if err := download(ctx, r.pprof+"?gc=1", r.o.HeapProfile); err != nil {
		return fmt.Errorf("ALM's heap profile: %w", err)
	}
	r.logf("ALM's heap profile: %s (go tool pprof -sample_index=inuse_space %s)", r.o.HeapProfile, r.o.HeapProfile)
	if res.Memory, err = MemoryUses(ctx, status, m, r.o.HeapProfile); err != nil {
		return err
	}
	r.stopALM()       // every request ALM made is in the audit log now
	mark := int64(-1) // no upgrade: every request is the installs'
	if res.Upgrade != nil {
		mark = r.auditMark
	}
	var after Requests
	res.Requests, after, err = readAudit(r.auditPath(), mark)
	if res.Upgrade != nil {
		res.Upgrade.Requests = after
	}
	return err
}

// labelValue returns the value of label in a sample key "name{a="x",b="y"}" of metric name.
func labelValue(key, name, label string) (string, bool) {
	var rest string
	if n := len(name); len(key) > n && key[:n] == name && key[n] == '{' {
		rest = key[n+1:]
	} else {
		return "", false
	}
	prefix := label + `="`
	for i := 0; i+len(prefix) <= len(rest); i++ {
		if rest[i:i+len(prefix)] == prefix {
			v := rest[i+len(prefix):]
			for j := 0; j < len(v); j++ {
				if v[j] == '"' {
					return v[:j], true
				}
			}
		}
	}
	return "", false
}

// sampleHeap records ALM's peak heap. With PeakProfiles, at each new peak 8 MB above the last one profiled it also
// saves ALM's heap profile (what was live at the last collection before it) beside the end's, as
// <HeapProfile>.peak for the installs and <HeapProfile>.upgrade-peak for the upgrades, to tell what the peak is made
// of.
func (r *run) sampleHeap(ctx context.Context) {
	profiled, last := 0.0, ""
	for ctx.Err() == nil {
		if m, err := scrape(ctx, r.metrics); err == nil {
			heap := m.Sum("go_memstats_heap_alloc_bytes")
			r.mu.Lock()
			r.peakHeap = max(r.peakHeap, heap)
			r.mu.Unlock()
			r.mu.Lock()
			suffix := r.peakProfile
			r.mu.Unlock()
			if suffix != last {
				profiled, last = 0, suffix
			}
			if r.o.PeakProfiles && heap > profiled+8e6 && download(ctx, r.pprof, r.o.HeapProfile+suffix) == nil {
				profiled = heap
			}
		}
		select {
		case <-ctx.Done():
		// Every second for a thousand installs; every 10s for ten thousand, whose metrics endpoint lists ten
		// thousand OperatorVersions a scrape (Prometheus scrapes every 15s to 60s).
		case <-time.After(max(time.Second, time.Duration(r.o.Installs())*time.Millisecond)):
		}
	}
}

func (r *run) waitCatalog(ctx context.Context) error {
	cs := &operatorsv1alpha1.CatalogSource{}
	return r.poll(ctx, time.Second, func() (bool, string, error) {
		if err := r.admin.Get(ctx, client.ObjectKey{Namespace: almNamespace, Name: catalogName}, cs); err != nil {
			return false, "", err
		}
		return int(cs.Status.PackageCount) == r.o.Packages,
			fmt.Sprintf("CatalogSource %s/%s serves %d packages (%d rejected), want %d", almNamespace, catalogName, cs.Status.PackageCount, cs.Status.RejectedCount, r.o.Packages), nil
	})
}

// createAppTypes creates the namespaces and their AppTypes: namespace i installs the packages i*PerNamespace,
// i*PerNamespace+1, ... (modulo the catalog size), so every package is installed in several namespaces.
func (r *run) createAppTypes(ctx context.Context) error {
	r.logf("creating %d AppTypes in %d namespaces", r.o.Installs(), r.o.Namespaces)
	errs := make(chan error, r.o.Namespaces)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 0; i < r.o.Namespaces; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ns := fmt.Sprintf("scale-%03d", i)
			// A cluster admin's namespace: ALM installs there with its own permissions.
			namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "true"}}}
			if err := r.admin.Create(ctx, namespace); err != nil {
				errs <- err
				return
			}
			for j := 0; j < r.o.PerNamespace; j++ {
				pkg := PackageName((i*r.o.PerNamespace + j) % r.o.Packages)
				at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg},
					Spec: operatorsv1alpha1.AppTypeSpec{Package: pkg}}
				if err := r.admin.Create(ctx, at); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// pollEvery is how often the waits look at the cluster: every 100ms for a thousand installs, less often for more,
// so that the harness's own reads (of its cache, without copies) leave the CPU to ALM and the API server.
func (r *run) pollEvery() time.Duration {
	return max(100*time.Millisecond, time.Duration(r.o.Installs()/10)*time.Millisecond)
}

func (r *run) waitSucceeded(ctx context.Context, informers cache.Cache, res *Result) error {
	return r.poll(ctx, r.pollEvery(), func() (bool, string, error) {
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := informers.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return false, "", err
		}
		phases := map[operatorsv1alpha1.OperatorVersionPhase]int{}
		for _, ov := range list.Items {
			phases[ov.Status.Phase]++
		}
		res.Succeeded = phases[operatorsv1alpha1.PhaseSucceeded]
		return res.Succeeded == res.Installs, fmt.Sprintf("%d OperatorVersions of %d installs, by phase: %v", len(list.Items), res.Installs, phases), nil
	})
}

func (r *run) waitReady(ctx context.Context, informers cache.Cache, res *Result) error {
	return r.poll(ctx, max(time.Second, r.pollEvery()), func() (bool, string, error) {
		list := &operatorsv1alpha1.AppTypeList{}
		if err := informers.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return false, "", err
		}
		res.Ready = 0
		for _, at := range list.Items {
			if apimeta.IsStatusConditionTrue(at.Status.Conditions, operatorsv1alpha1.ConditionReady) {
				res.Ready++
			}
		}
		return res.Ready == res.Installs, fmt.Sprintf("%d of %d AppTypes Ready", res.Ready, res.Installs), nil
	})
}

// poll calls cond every interval until it is done, logging its progress every 10s; when ctx ends it returns the
// last progress message.
func (r *run) poll(ctx context.Context, interval time.Duration, cond func() (bool, string, error)) error {
	var last string
	lastLog := time.Now()
	err := wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
		done, progress, err := cond()
		if err != nil {
			return false, err
		}
		last = progress
		if time.Since(lastLog) > 10*time.Second {
			r.logf("%s", progress)
			lastLog = time.Now()
		}
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("%w: %s", err, last)
	}
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
