package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// UpgradeResult is what the upgrade phase measured: from the publish of 2.0.0 of every package (PublishUpgrade) to
// every AppType running 2.0.0 and every 1.0.0 OperatorVersion gone.
type UpgradeResult struct {
	// Upgraded is how many AppTypes report 2.0.0 installed with its OperatorVersion Succeeded; OldLeft how many
	// 1.0.0 OperatorVersions still exist at the end.
	Upgraded, OldLeft int
	// ObjectsPerUpgrade is how many objects the new version ships.
	ObjectsPerUpgrade int
	// Kept is how many installed objects have the same name and UID before and after the upgrade; Recreated how
	// many have the same name and another UID (deleted and created again instead of handed over); Removed and
	// Added how many names are gone and new (the ConfigMap only one version ships, RBAC named after its version).
	Kept, Recreated, Removed, Added int
	// RemovedLeft is how many of the ConfigMaps only 1.0.0 ships still exist; AddedMissing how many of those only
	// 2.0.0 ships do not.
	RemovedLeft, AddedMissing int
	// PeakRSS is ALM's peak resident set size from the publish to the end (VmHWM, reset at the publish), in bytes.
	PeakRSS float64
	// Requests are ALM's API requests from the publish to the end.
	Requests Requests
	// Allocated is how many bytes ALM allocated on its heap from the publish to the end (what its collector had to
	// take back: its CPU is in CPU["alm"]), from its go_memstats_alloc_bytes_total.
	Allocated float64
	// Took is from the publish to the end of the upgrades; AfterAvailable from the last Deployment marked
	// available to the end.
	Took, AfterAvailable time.Duration
	// CPU is the CPU time each process of the run used from the publish to the end: with every process on one
	// machine, what bounds Took when their sum nears Took times the machine's cores.
	CPU CPUTimes
}

// RequestsPerUpgrade is ALM's API requests after the publish divided by the upgrades.
func (u *UpgradeResult) RequestsPerUpgrade(installs int) float64 {
	return float64(u.Requests.Total()) / float64(installs)
}

// uidKey names an object the scale bundles ship: "Kind namespace/name".
type uidKey string

// scaleKinds are the kinds of the objects a scale bundle ships.
var scaleKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ServiceAccount"}, {Version: "v1", Kind: "ConfigMap"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
}

// installedUIDs lists the UIDs of every object ALM installed (labelled with a package), by kind, namespace and name.
func (r *run) installedUIDs(ctx context.Context) (map[uidKey]types.UID, error) {
	out := map[uidKey]types.UID{}
	for _, gvk := range scaleKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.admin.List(ctx, list, client.HasLabels{operatorsv1alpha1.LabelAppType}); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			out[uidKey(gvk.Kind+" "+o.Namespace+"/"+o.Name)] = o.UID
		}
	}
	return out, nil
}

// upgrade publishes 2.0.0 of every package, waits until every AppType runs it and every 1.0.0 OperatorVersion is
// gone, and compares the objects before and after.
func (r *run) upgrade(ctx context.Context, informers cache.Cache, k *kubelet, res *Result) error {
	before, err := r.installedUIDs(ctx)
	if err != nil {
		return err
	}
	u := &UpgradeResult{ObjectsPerUpgrade: ObjectsPerBundle}
	res.Upgrade = u
	if r.auditMark, err = fileSize(r.auditPath()); err != nil {
		return err
	}
	if err := resetPeakRSS(r.alm.Process.Pid); err != nil {
		return err
	}
	allocated, err := r.allocated(ctx)
	if err != nil {
		return err
	}
	r.logf("publishing %s of %d packages", upgradeVersion, r.o.Packages)
	cpu, start := readCPUTimes(), time.Now()
	if err := PublishUpgrade(filepath.Join(r.work, "catalog"), r.o.Packages); err != nil {
		return err
	}
	if err := r.waitUpgraded(ctx, informers, u); err != nil {
		return err
	}
	_, last := k.last()
	u.Took, u.AfterAvailable, u.CPU = time.Since(start), time.Since(last), readCPUTimes().Since(cpu)
	if u.Allocated, err = r.allocated(ctx); err != nil {
		return err
	}
	u.Allocated -= allocated
	r.logf("all %d AppTypes run %s and no %s OperatorVersion is left, %.1fs after the publish, %.1fs after the last Deployment was marked available",
		u.Upgraded, upgradeVersion, bundleVersion, u.Took.Seconds(), u.AfterAvailable.Seconds())
	after, err := r.installedUIDs(ctx)
	if err != nil {
		return err
	}
	compareUIDs(u, before, after)
	return nil
}

// allocated is the bytes ALM has allocated on its heap since it started.
func (r *run) allocated(ctx context.Context) (float64, error) {
	m, err := scrape(ctx, r.metrics)
	if err != nil {
		return 0, err
	}
	return m.Sum("go_memstats_alloc_bytes_total"), nil
}

// compareUIDs counts, between the objects installed before and after the upgrade, those kept with their UID,
// those re-created (same name, another UID), those removed and those added; and checks the ConfigMap 1.0.0 ships
// and 2.0.0 does not (and the reverse). Objects named after their version (RBAC) are removed and added, never
// re-created.
func compareUIDs(u *UpgradeResult, before, after map[uidKey]types.UID) {
	for key, uid := range before {
		now, ok := after[key]
		switch {
		case !ok:
			u.Removed++
		case now != uid:
			u.Recreated++
		default:
			u.Kept++
		}
		if isOldConfigMap(key) {
			if ok {
				u.RemovedLeft++
			}
			if _, ok := after[newConfigMapKey(key)]; !ok {
				u.AddedMissing++
			}
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			u.Added++
		}
	}
}

// waitUpgraded waits until every AppType reports 2.0.0 installed and Ready, and no 1.0.0 OperatorVersion exists.
// Both are read from the run's informers: listing a thousand AppTypes from the API server every second took about a
// tenth of its CPU during the upgrades, which the run measures.
func (r *run) waitUpgraded(ctx context.Context, informers cache.Cache, u *UpgradeResult) error {
	return r.poll(ctx, time.Second, func() (bool, string, error) {
		ats := &operatorsv1alpha1.AppTypeList{}
		if err := informers.List(ctx, ats, client.UnsafeDisableDeepCopy); err != nil {
			return false, "", err
		}
		u.Upgraded = 0
		for _, at := range ats.Items {
			if at.Status.InstalledVersion == upgradeVersion && apimeta.IsStatusConditionTrue(at.Status.Conditions, operatorsv1alpha1.ConditionReady) {
				u.Upgraded++
			}
		}
		ovs := &operatorsv1alpha1.OperatorVersionList{}
		if err := informers.List(ctx, ovs, client.UnsafeDisableDeepCopy); err != nil {
			return false, "", err
		}
		u.OldLeft = 0
		phases := map[string]int{}
		for _, ov := range ovs.Items {
			if ov.Spec.Version.String() == bundleVersion {
				u.OldLeft++
			}
			phases[ov.Spec.Version.String()+" "+string(ov.Status.Phase)]++
		}
		return u.Upgraded == len(ats.Items) && u.OldLeft == 0,
			fmt.Sprintf("%d of %d AppTypes run %s and are Ready; OperatorVersions by version and phase: %v", u.Upgraded, len(ats.Items), upgradeVersion, phases), nil
	})
}

// isOldConfigMap says whether key is the ConfigMap only 1.0.0 ships.
func isOldConfigMap(key uidKey) bool {
	return strings.HasPrefix(string(key), "ConfigMap ") && strings.HasSuffix(string(key), "-config")
}

// newConfigMapKey is the ConfigMap 2.0.0 ships in place of 1.0.0's old.
func newConfigMapKey(old uidKey) uidKey {
	return uidKey(strings.TrimSuffix(string(old), "-config") + "-settings")
}

// fileSize is the size of the file at path: the audit log's end, where the upgrade's requests begin.
func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// resetPeakRSS resets a process's peak resident set size (VmHWM) to its current one (proc(5): clear_refs, 5).
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}
