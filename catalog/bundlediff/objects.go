package bundlediff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/policy"
)

// object is one installed object as the diff sees it: kind, name and the content compared.
type object struct {
	kind, name string
	content    any
	refused    string // why the installer refuses it (policy), for added or changed objects
}

// objectsOf lists the objects a bundle installs besides CRDs and RBAC rules: the install strategy's Deployments and
// ServiceAccounts, and the bundle's other objects.
func objectsOf(m *bundle.Manifests) map[string]object {
	out := map[string]object{}
	add := func(o object) { out[o.kind+"/"+o.name] = o }
	if m.CSV != nil {
		s := m.CSV.Spec.InstallStrategy.StrategySpec
		for _, d := range s.DeploymentSpecs {
			o := object{kind: "Deployment", name: d.Name, content: d.Spec}
			if why := policy.PrivilegedPod(&d.Spec.Template.Spec); why != "" {
				o.refused = Clip(policy.RulePrivilegedPod + ": " + why + "; " + policy.OptInHint(policy.RulePrivilegedPod))
			}
			add(o)
		}
		for _, p := range append(append([]opv1alpha1.StrategyDeploymentPermissions{}, s.Permissions...), s.ClusterPermissions...) {
			add(object{kind: "ServiceAccount", name: p.ServiceAccountName})
		}
	}
	for _, u := range m.Objects {
		o := object{kind: u.GetKind(), name: u.GetName(), content: contentOf(u)}
		if role := policy.PrivilegedBinding(u); role != "" {
			o.refused = policy.RulePrivilegedBinding + ": binds the " + role + "; " + policy.OptInHint(policy.RulePrivilegedBinding)
		}
		if policy.AggregatedRole(u) {
			o.refused = policy.RuleAggregatedRole + ": its aggregationRule gathers the rules of other ClusterRoles; " + policy.OptInHint(policy.RuleAggregatedRole)
		}
		add(o)
	}
	return out
}

// contentOf is an object without the metadata the installer sets itself.
func contentOf(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	md, _ := c["metadata"].(map[string]any)
	if md != nil {
		c["metadata"] = map[string]any{"labels": md["labels"], "annotations": md["annotations"]}
	}
	return c
}

// diffObjects compares the objects of two bundles; it also returns what changed in changed Deployments.
func diffObjects(older, newer *bundle.Manifests) ([]almv1alpha1.PreviewChange, []string) {
	before, after := objectsOf(older), objectsOf(newer)
	var out []almv1alpha1.PreviewChange
	aspects := map[string]bool{}
	for key, n := range after {
		o, ok := before[key]
		switch {
		case !ok:
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeAdded, Kind: n.kind, Name: n.name, Refused: n.refused})
		case n.kind == "Deployment":
			detail, what := deploymentChange(o.content.(appsv1.DeploymentSpec), n.content.(appsv1.DeploymentSpec))
			if detail == "" {
				continue
			}
			for _, a := range what {
				aspects[a] = true
			}
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeChanged, Kind: n.kind, Name: n.name, Detail: Clip(detail), Refused: n.refused})
		case !equality.Semantic.DeepEqual(o.content, n.content):
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeChanged, Kind: n.kind, Name: n.name, Refused: n.refused})
		}
	}
	for key, o := range before {
		if _, ok := after[key]; !ok {
			out = append(out, almv1alpha1.PreviewChange{Op: almv1alpha1.ChangeRemoved, Kind: o.kind, Name: o.name})
		}
	}
	return out, sortedKeys(aspects)
}

// deploymentChange describes what changed between two Deployment specs, container by container (image, args,
// env), and names the aspects that changed; "" when nothing did.
func deploymentChange(older, newer appsv1.DeploymentSpec) (string, []string) {
	var parts []string
	aspects := map[string]bool{}
	oc, nc := containers(older), containers(newer)
	for _, name := range unionKeys(oc, nc) {
		o, inOld := oc[name]
		n, inNew := nc[name]
		switch {
		case !inOld:
			parts, aspects["containers"] = append(parts, fmt.Sprintf("container %s added (image %s)", name, n.Image)), true
		case !inNew:
			parts, aspects["containers"] = append(parts, fmt.Sprintf("container %s removed", name)), true
		default:
			if what := containerChange(o, n); what != "" {
				parts = append(parts, fmt.Sprintf("container %s: %s", name, what))
				for _, a := range containerAspects(o, n) {
					aspects[a] = true
				}
			}
		}
	}
	if len(parts) == 0 && !equality.Semantic.DeepEqual(older, newer) {
		parts, aspects["spec"] = append(parts, "other fields of the Deployment spec"), true
	}
	return strings.Join(parts, "; "), sortedKeys(aspects)
}

// containers maps a Deployment's containers (init containers too) by name.
func containers(spec appsv1.DeploymentSpec) map[string]corev1.Container {
	out := map[string]corev1.Container{}
	for _, c := range append(append([]corev1.Container{}, spec.Template.Spec.InitContainers...), spec.Template.Spec.Containers...) {
		out[c.Name] = c
	}
	return out
}

// containerChange says how a container's image, args and env changed, or other fields.
func containerChange(o, n corev1.Container) string {
	var parts []string
	if o.Image != n.Image {
		parts = append(parts, fmt.Sprintf("image %s -> %s", o.Image, n.Image))
	}
	if !slices.Equal(o.Args, n.Args) || !slices.Equal(o.Command, n.Command) {
		parts = append(parts, fmt.Sprintf("args %q -> %q", append(o.Command, o.Args...), append(n.Command, n.Args...)))
	}
	if env := envChange(o.Env, n.Env); env != "" {
		parts = append(parts, "env "+env)
	}
	if len(parts) == 0 && !equality.Semantic.DeepEqual(o, n) {
		parts = append(parts, "other fields")
	}
	return strings.Join(parts, ", ")
}

// containerAspects names what changed in a container, for the summary.
func containerAspects(o, n corev1.Container) []string {
	var out []string
	if o.Image != n.Image {
		out = append(out, "image")
	}
	if !slices.Equal(o.Args, n.Args) || !slices.Equal(o.Command, n.Command) {
		out = append(out, "args")
	}
	if envChange(o.Env, n.Env) != "" {
		out = append(out, "env")
	}
	if len(out) == 0 {
		out = append(out, "spec")
	}
	return out
}

// envChange lists environment variables added (+), changed (~) and removed (-), by name; values are not shown
// (they may be long, and a Secret reference says nothing more).
func envChange(older, newer []corev1.EnvVar) string {
	o, n := map[string]corev1.EnvVar{}, map[string]corev1.EnvVar{}
	for _, e := range older {
		o[e.Name] = e
	}
	for _, e := range newer {
		n[e.Name] = e
	}
	var parts []string
	for _, name := range unionKeys(o, n) {
		a, inOld := o[name]
		b, inNew := n[name]
		switch {
		case !inOld:
			parts = append(parts, "+"+name)
		case !inNew:
			parts = append(parts, "-"+name)
		case !reflect.DeepEqual(a, b):
			parts = append(parts, "~"+name)
		}
	}
	return strings.Join(parts, " ")
}

func unionKeys[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return sortedKeys(set)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Clip bounds a detail or message to what an UpgradePreview's fields hold (1024 characters), cutting at a
// character boundary.
func Clip(s string) string {
	const limit = 1000
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + " …"
}
