package installer

import (
	"context"
	"errors"
	"fmt"
	"time"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/crdsafety"
	"github.com/almproject/alm/controllers/internal/access"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/cleanup"
	"github.com/almproject/alm/controllers/internal/dependencies"
	"github.com/almproject/alm/controllers/internal/objectcache"
	"github.com/almproject/alm/controllers/internal/rollout"
	"github.com/almproject/alm/internal/status"
)

// DefaultTimeout is how long an install may take to become Succeeded before it is marked Failed.
const DefaultTimeout = 5 * time.Minute

// Installer moves an OperatorVersion through Pending (while required CRDs are missing) -> Installing -> Succeeded
// (or Failed), one phase per call; a version whose requirements are met is applied in the same call, so it passes
// InstallReady without a status write of its own. The Install and Upgrade loops share it.
type Installer struct {
	// Client writes, and reads Deployments and CRDs through the manager's cache. A cached Deployment counts as
	// rolled out only when it carries the content this step applied (operatorsv1alpha1.AnnotationAppliedHash) and its status observed it.
	Client client.Client
	// Objects reads the metadata of the objects the installer applies (see objectcache.For); Reader reads them from the API
	// server when the cache does not know them. Objects nil: everything is read through Reader.
	Objects  client.Reader
	Reader   client.Reader
	Mapper   apimeta.RESTMapper
	Recorder events.EventRecorder
	// Timeout bounds Pending and Installing; then the version is Failed.
	Timeout time.Duration
	// Loop is the loop the installer works for ("install" or "upgrade"): a phase change to Succeeded or Failed counts
	// as an install or an upgrade of that loop (controllers/metrics).
	Loop string
	// Now is the clock; tests may replace it.
	Now func() time.Time
	// HandOverAnnounces: the loop announces a version's first Succeeded with the Event of its hand-over (the Upgrade
	// loop's Adopted, which says it succeeded), so this step records none: one Event per upgrade instead of two.
	HandOverAnnounces bool
	// Writes remembers the installer's own writes of OperatorVersions (finalizer, status), see Stale.
	Writes status.Writes
	// Bundles verifies the bundle content against spec.bundle.digest and pulls bundle images; shared by the Install
	// and Upgrade loops. nil: content in spec is verified, bundle images cannot be pulled.
	Bundles *bundlecontent.Source
	// Cleanup runs the cleanup finalizer of deleted versions (Finalize); nil: not run (unit tests).
	Cleanup *cleanup.Cleaner
	// Access checks, before anything is applied, that the identity a version installs as may create and grant
	// everything in its plan (spec.serviceAccountName), or that ALM may install it with its own permissions there.
	// nil: no check (unit tests).
	Access *access.Checker
}

// Stale says whether ov, as read from the cache, does not show the installer's last write of it yet; the loop skips
// it, and the watch event of that write brings it back.
func (in *Installer) Stale(ov *operatorsv1alpha1.OperatorVersion) bool {
	return in.Writes.Stale(ov)
}

// New returns an Installer that uses mgr's client, REST mapper and an event recorder named for the loop, and
// bundles to verify and pull bundle content.
func New(mgr ctrl.Manager, loop string, timeout time.Duration, bundles *bundlecontent.Source) *Installer {
	return &Installer{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Loop: loop,
		Recorder: mgr.GetEventRecorder(loop), Timeout: timeout, Bundles: bundles,
		Cleanup: &cleanup.Cleaner{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Kinds: OwnableKinds},
		Access:  &access.Checker{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Policy: access.Policy{TrustAllNamespaces: true}}}
}

// UseObjectCache makes the installer read the objects it applies from mgr's cache of ALM's objects (objectcache.For).
func (in *Installer) UseObjectCache(mgr ctrl.Manager) error {
	objects, err := objectcache.For(mgr)
	if err != nil {
		return fmt.Errorf("creating the cache of ALM's objects: %w", err)
	}
	in.Objects = objects
	if in.Cleanup != nil {
		in.Cleanup.Objects = objects
	}
	return nil
}

// Finalize runs the cleanup finalizer of OperatorVersion key when it is being deleted (cleanup.Cleaner.Finalize)
// and says whether it was, and when to look again. The Install and Upgrade loops call it first, so either one
// removes the finalizer it adds.
func (in *Installer) Finalize(ctx context.Context, key client.ObjectKey) (bool, time.Duration, error) {
	if in.Cleanup == nil {
		return false, 0, nil
	}
	return in.Cleanup.Finalize(ctx, key)
}

func (in *Installer) objects() client.Reader {
	if in.Objects != nil {
		return in.Objects
	}
	return in.Reader
}

// Result is the outcome of one Step.
type Result struct {
	// Status is the OperatorVersion's new status.
	Status operatorsv1alpha1.OperatorVersionStatus
	// Plan is what the version installs, when it could be built.
	Plan *Plan
	// RequeueAfter asks to look again even if nothing changes.
	RequeueAfter time.Duration
	// Terminal is a reconcile.TerminalError when this step failed the version for a reason retrying cannot fix
	// (the status says why); the loop returns it after writing the status.
	Terminal error
}

// ReasonConflict: an object the version needs belongs to someone else.
const ReasonConflict = "ObjectConflict"

// Step advances ov by at most one phase and returns the status to write. It never writes ov's status itself. It
// verifies the bundle content (nothing is planned or applied from content that does not match spec.bundle.digest),
// reads (the plan, the required CRDs), lets decide choose, applies the plan when decide asks, reads the
// Deployments and lets decide choose again.
func (in *Installer) Step(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) (Result, error) {
	st := *ov.Status.DeepCopy()
	st.ObservedGeneration = ov.Generation
	res := Result{}
	if st.Phase == operatorsv1alpha1.PhaseFailed && terminal[st.Reason] {
		res.Status = st // nothing to read: a newer version has to fix the bundle
		return res, nil
	}
	now := in.now()
	f := facts{status: &st, now: now, age: now.Sub(ov.CreationTimestamp.Time), timeout: in.timeout()}
	content, err := in.content(ctx, ov, &f)
	if err != nil {
		return res, err
	}
	var plan *Plan
	if content != nil {
		if plan, err = in.plan(ctx, content, &f); err != nil {
			return res, err
		}
		res.Plan = plan
	}
	v := decide(f)
	if v.apply {
		if f.refused, err = in.authorize(ctx, ov, plan); err != nil {
			return res, err
		}
		if f.refused == "" {
			if f.applied, err = in.apply(ctx, ov, content, plan, &st); err != nil {
				return res, err
			}
		}
		v = decide(f)
	}
	in.record(ov, &st, v)
	res.Status, res.RequeueAfter = st, v.requeueAfter
	res.RequeueAfter = plan.renewal(res.RequeueAfter, now)
	if v.terminal() {
		res.Terminal = reconcile.TerminalError(fmt.Errorf("OperatorVersion %s: %s: %s", klog.KObj(ov), v.reason, truncate(v.message)))
	}
	return res, nil
}

// content verifies ov's bundle content (bundlecontent.Verify) and returns the OperatorVersion to plan from: ov, or
// a copy of it holding the content of its bundle image. It returns nil, and f.bundle says why, when the content is
// not verified, a version without spec.bundle included (bundlecontent.Unrecorded): nothing of it is applied.
func (in *Installer) content(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, f *facts) (*operatorsv1alpha1.OperatorVersion, error) {
	verifiedBefore := apimeta.IsStatusConditionTrue(f.status.Conditions, operatorsv1alpha1.ConditionBundleVerified)
	r, err := in.Bundles.Verify(ctx, in.Reader, ov, verifiedBefore)
	if err != nil {
		return nil, err
	}
	f.bundle = &bundleCheck{verified: r.Verified}
	if r.Err != nil {
		f.bundle.reason, f.bundle.message, f.bundle.permanent = r.Err.Reason, r.Err.Message, r.Err.Permanent
	}
	return r.Content, nil
}

// authorize says why the identity ov installs as may not create or grant everything in plan (access.Checker), ""
// when it may; it runs after the plan is built and before the first write. A refusal gets a Warning Event when its
// message changes.
func (in *Installer) authorize(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, plan *Plan) (string, error) {
	if in.Access == nil {
		return "", nil
	}
	refused, err := in.Access.Check(ctx, ov.Namespace, ov.Spec.ServiceAccountName, plan.All(), in.resource)
	if err != nil {
		return "", fmt.Errorf("OperatorVersion %s: checking spec.serviceAccountName %q: %w", klog.KObj(ov), ov.Spec.ServiceAccountName, err)
	}
	before := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionAuthorized)
	if refused != "" && in.Recorder != nil && ov.Status.Phase == operatorsv1alpha1.PhaseSucceeded && (before == nil || before.Message != truncate(refused)) {
		// A version that is not running gets the Failed Event; a running one keeps its phase and gets this one.
		in.Recorder.Eventf(ov, nil, corev1.EventTypeWarning, operatorsv1alpha1.ReasonInstallRefused, "Install", "%s", eventNote(refused))
	}
	return refused, nil
}

// resource maps a kind to its resource name, for access reviews.
func (in *Installer) resource(gvk schema.GroupVersionKind) (string, error) {
	mapping, err := in.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	return mapping.Resource.Resource, nil
}

// plan builds content's plan and reads its required CRDs into f; an invalid strategy is a fact for decide.
func (in *Installer) plan(ctx context.Context, content *operatorsv1alpha1.OperatorVersion, f *facts) (*Plan, error) {
	plan, err := NewPlan(content, in.scope)
	if err == nil {
		err = in.policy(ctx, content, plan)
	}
	var invalid *InvalidError
	switch {
	case errors.As(err, &invalid):
		f.invalid = invalid.Msg
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := fillWebhooks(ctx, in.Reader, content, plan, f.now); err != nil {
		return nil, err
	}
	if f.status.RequirementStatus, f.missing, err = in.requirements(ctx, content); err != nil {
		return nil, err
	}
	f.dependencies, f.cycle, err = dependencies.Check(ctx, in.Client, content)
	return plan, err
}

// apply installs the plan of content (ov, or the copy of it holding its bundle image's content) (owned CRDs first,
// only when their update is safe, then everything else), records what ov owns in st, and reads the Deployments'
// rollout. The finalizer is added to ov, as stored. Conflicts and unsafe CRD updates are facts for decide.
func (in *Installer) apply(ctx context.Context, ov, content *operatorsv1alpha1.OperatorVersion, plan *Plan, st *operatorsv1alpha1.OperatorVersionStatus) (*applied, error) {
	if err := in.ensureFinalizer(ctx, ov); err != nil {
		return nil, err
	}
	owned, written, err := in.applyAll(ctx, content, plan)
	var conflict *ConflictError
	var unsafe *unsafeCRDError
	switch {
	case errors.As(err, &conflict):
		return &applied{conflict: conflict.Msg}, nil
	case errors.As(err, &unsafe):
		return &applied{unsafeCRD: unsafe.Error()}, nil
	case err != nil:
		return nil, err
	}
	st.Owned = owned
	a := &applied{objects: len(owned), skipped: plan.Skipped}
	a.notReady, a.failed, a.problem, err = in.notReady(ctx, content, plan, written, st.Phase == operatorsv1alpha1.PhaseSucceeded)
	return a, err
}

// record writes the verdict into st: its conditions in order, then the phase, with an Event when the phase changes.
func (in *Installer) record(ov *operatorsv1alpha1.OperatorVersion, st *operatorsv1alpha1.OperatorVersionStatus, v verdict) {
	for _, c := range v.conditions {
		setCondition(st, ov, c.Type, c.Status, c.Reason, c.Message)
	}
	switch v.phase {
	case "":
	case operatorsv1alpha1.PhaseFailed:
		in.fail(ov, st, v.reason, v.message)
	default:
		in.setPhase(ov, st, v.phase, v.reason, v.message)
	}
}

type unsafeCRDError struct{ error }

// applyAll applies the plan and returns what ov owns, and the Deployments this step wrote (as stored), by name.
func (in *Installer) applyAll(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, plan *Plan) ([]operatorsv1alpha1.OwnedObject, map[string]*appsv1.Deployment, error) {
	for _, crd := range plan.CRDs {
		if err := in.checkCRD(ctx, crd); err != nil {
			return nil, nil, err
		}
	}
	var owned []operatorsv1alpha1.OwnedObject
	written := map[string]*appsv1.Deployment{}
	for _, obj := range plan.All() {
		stored, err := Apply(ctx, in.Client, in.objects(), in.Reader, ov, obj)
		if err != nil {
			return nil, nil, err
		}
		gvk := obj.GroupVersionKind()
		owned = append(owned, operatorsv1alpha1.OwnedObject{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Namespace: stored.GetNamespace(), Name: stored.GetName(), UID: stored.GetUID(),
		})
		if u, ok := stored.(*unstructured.Unstructured); ok && gvk.GroupKind() == deploymentGK {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
				return nil, nil, err
			}
			written[d.Name] = d
		}
	}
	return owned, written, nil
}

var deploymentGK = appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind()

// checkCRD refuses an owned CRD update that would lose stored versions or invalidate existing objects.
func (in *Installer) checkCRD(ctx context.Context, desiredU *unstructured.Unstructured) error {
	desired := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(desiredU.Object, desired); err != nil {
		return &unsafeCRDError{fmt.Errorf("CRD %s in spec.objects is malformed: %w", desiredU.GetName(), err)}
	}
	existing := &apiextensionsv1.CustomResourceDefinition{}
	err := in.Client.Get(ctx, client.ObjectKey{Name: desired.Name}, existing)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if existing.Annotations[operatorsv1alpha1.AnnotationAppliedHash] == Hash(desiredU) {
		return nil // the installer applied this very content before: nothing changes
	}
	var objects []unstructured.Unstructured
	for _, v := range existing.Spec.Versions {
		if !v.Served {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: existing.Spec.Group, Version: v.Name, Kind: existing.Spec.Names.ListKind})
		if err := in.Client.List(ctx, list); err != nil {
			return fmt.Errorf("listing %s to check the CRD update: %w", existing.Name, err)
		}
		objects = append(objects, list.Items...)
	}
	if err := crdsafety.UpdateSafe(existing, desired, objects); err != nil {
		return &unsafeCRDError{err}
	}
	return nil
}

func (in *Installer) requirements(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) ([]opv1alpha1.RequirementStatus, []string, error) {
	var reqs []opv1alpha1.RequirementStatus
	var missing []string
	for _, desc := range ov.Spec.CustomResourceDefinitions.Required {
		rs := opv1alpha1.RequirementStatus{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: desc.Name}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := in.Client.Get(ctx, client.ObjectKey{Name: desc.Name}, crd)
		switch {
		case apierrors.IsNotFound(err):
			rs.Status, rs.Message = opv1alpha1.RequirementStatusReasonNotPresent, "CRD not found"
			missing = append(missing, desc.Name)
		case err != nil:
			return nil, nil, err
		case !established(crd):
			rs.Status, rs.Message = opv1alpha1.RequirementStatusReasonNotAvailable, "CRD not established"
			missing = append(missing, desc.Name+" (not established)")
		default:
			rs.Status, rs.Message, rs.UUID = opv1alpha1.RequirementStatusReasonPresent, "CRD present and established", string(crd.UID)
		}
		reqs = append(reqs, rs)
	}
	return reqs, missing, nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// notReady lists the Deployments of plan that are not rolled out, each with the most useful reason the cluster
// reports (explain), and returns the first such reason. A Deployment this step wrote is judged as
// stored; another is read from the cache and must carry the content of plan (operatorsv1alpha1.AnnotationAppliedHash), so that a cache that
// still holds an earlier, rolled-out spec does not count as ready. A Succeeded version ignores a Deployment that a
// newer version is rolling out (it co-owns it): the old pods keep serving until the rollout is done, and the old
// version's status must not turn to Installing because of the new version's rollout.
func (in *Installer) notReady(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion, plan *Plan, written map[string]*appsv1.Deployment, succeeded bool) (out, failed []string, reason string, err error) {
	for _, obj := range plan.Objects {
		if obj.GroupVersionKind().GroupKind() != deploymentGK {
			continue
		}
		name := obj.GetName()
		d := written[name]
		if d == nil {
			d = &appsv1.Deployment{}
			if err := in.Client.Get(ctx, client.ObjectKey{Namespace: ov.Namespace, Name: name}, d); err != nil {
				if apierrors.IsNotFound(err) {
					out = append(out, fmt.Sprintf("Deployment %s: not found", name))
					continue
				}
				return nil, nil, "", err
			}
		}
		if succeeded && coOwnedByAnotherVersion(d, ov) {
			continue
		}
		if d.Annotations[operatorsv1alpha1.AnnotationAppliedHash] != Hash(obj) {
			out = append(out, fmt.Sprintf("Deployment %s: waiting for the spec change to be observed", name))
			continue
		}
		ready, explained := rollout.DeploymentReady(d)
		if !ready {
			explained, reason = in.explain(ctx, d, podSelector(obj), explained, reason)
			out = append(out, explained)
		}
		if bad, why := rollout.DeploymentFailedSince(d, appliedAt(ov, in.now())); bad {
			if !ready { // with the pods' reason: a deadline says only that they did not become available in time
				why = explained
			}
			failed = append(failed, why)
		}
	}
	return out, failed, reason, nil
}

// podSelector is the spec.selector of a planned Deployment; nil when it has none or it is malformed.
func podSelector(deployment *unstructured.Unstructured) *metav1.LabelSelector {
	m, ok, err := unstructured.NestedMap(deployment.Object, "spec", "selector")
	if !ok || err != nil {
		return nil
	}
	sel := &metav1.LabelSelector{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel) != nil {
		return nil
	}
	return sel
}

// appliedAt is when ov's objects were applied (its Installed condition turned True), or now when they are applied
// in this step: a rollout failure reported before that is an earlier spec's.
func appliedAt(ov *operatorsv1alpha1.OperatorVersion, now time.Time) time.Time {
	if c := apimeta.FindStatusCondition(ov.Status.Conditions, operatorsv1alpha1.ConditionInstalled); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return now
}

func (in *Installer) ensureFinalizer(ctx context.Context, ov *operatorsv1alpha1.OperatorVersion) error {
	if controllerutil.ContainsFinalizer(ov, cleanup.Finalizer) {
		return nil
	}
	before := ov.ResourceVersion
	patch := client.MergeFrom(ov.DeepCopy())
	controllerutil.AddFinalizer(ov, cleanup.Finalizer)
	if err := in.Client.Patch(ctx, ov, patch); err != nil {
		return err
	}
	in.Writes.Wrote(ov, before)
	return nil
}

// scope maps a kind to whether it is namespaced and served.
func (in *Installer) scope(gvk schema.GroupVersionKind) (bool, bool, error) {
	mapping, err := in.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if apimeta.IsNoMatchError(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return mapping.Scope.Name() == apimeta.RESTScopeNameNamespace, true, nil
}

func (in *Installer) setPhase(ov *operatorsv1alpha1.OperatorVersion, st *operatorsv1alpha1.OperatorVersionStatus, phase operatorsv1alpha1.OperatorVersionPhase, reason, msg string) {
	quiet := in.HandOverAnnounces && phase == operatorsv1alpha1.PhaseSucceeded && st.TakenOver == nil
	if st.Phase != phase && in.Recorder != nil && announced(st.Phase, phase) && !quiet {
		in.Recorder.Eventf(ov, nil, corev1.EventTypeNormal, string(phase), "Install", "%s: %s", phase, msg)
	}
	st.Phase, st.Reason, st.Message = phase, reason, msg
	ready := metav1.ConditionFalse
	if phase == operatorsv1alpha1.PhaseSucceeded {
		ready = metav1.ConditionTrue
	}
	setCondition(st, ov, operatorsv1alpha1.ConditionReady, ready, reason, msg)
}

// announced says whether a phase change gets an Event. Every one does but the start of an install (to Installing
// from nothing, Pending or InstallReady): the version's phase shows it, its Succeeded or Failed Event tells how it
// ended (an upgrade is announced by the upgrade trigger's Upgrading Event), and at a thousand installs every Event is
// a request. A Succeeded version that goes back to
// Installing (a Deployment is no longer available) gets one.
func announced(from, to operatorsv1alpha1.OperatorVersionPhase) bool {
	return to != operatorsv1alpha1.PhaseInstalling && to != operatorsv1alpha1.PhaseInstallReady || from == operatorsv1alpha1.PhaseSucceeded
}

func (in *Installer) fail(ov *operatorsv1alpha1.OperatorVersion, st *operatorsv1alpha1.OperatorVersionStatus, reason, msg string) {
	if st.Phase != operatorsv1alpha1.PhaseFailed && in.Recorder != nil {
		in.Recorder.Eventf(ov, nil, corev1.EventTypeWarning, reason, "Install", "%s", eventNote("Failed: "+msg))
	}
	st.Phase, st.Reason, st.Message = operatorsv1alpha1.PhaseFailed, reason, msg
	setCondition(st, ov, operatorsv1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
}

func setCondition(st *operatorsv1alpha1.OperatorVersionStatus, ov *operatorsv1alpha1.OperatorVersion, t string, s metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: truncate(msg), ObservedGeneration: ov.Generation,
	})
}

// eventNote fits msg into an Event's note (at most 1024 bytes), pointing to the status for the rest.
func eventNote(msg string) string {
	const limit, more = 1024, " ... (see the OperatorVersion's status)"
	if len(msg) <= limit {
		return msg
	}
	return msg[:limit-len(more)] + more
}

func truncate(s string) string {
	if len(s) > 32000 {
		return s[:32000]
	}
	return s
}

func (in *Installer) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

func (in *Installer) timeout() time.Duration {
	if in.Timeout > 0 {
		return in.Timeout
	}
	return DefaultTimeout
}

func coOwnedByAnotherVersion(obj metav1.Object, ov *operatorsv1alpha1.OperatorVersion) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == "OperatorVersion" && ref.APIVersion == operatorsv1alpha1.GroupVersion.String() && ref.UID != ov.UID {
			return true
		}
	}
	return false
}
