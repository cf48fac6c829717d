// Package rbac_test checks ALM's generated RBAC (role.yaml, from the markers in cmd/alm/rbac.go): least privilege,
// and enough for every kind a bundle may contain.
package rbac_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/catalog/policy"
)

// resources maps the kinds ALM installs to their API resources (as the API server serves them).
var resources = map[schema.GroupKind]string{
	{Kind: "Service"}:        "services",
	{Kind: "ConfigMap"}:      "configmaps",
	{Kind: "Secret"}:         "secrets",
	{Kind: "ServiceAccount"}: "serviceaccounts",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                              "roles",
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                       "rolebindings",
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       "clusterroles",
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                "clusterrolebindings",
	{Group: "policy", Kind: "PodDisruptionBudget"}:                                  "poddisruptionbudgets",
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             "priorityclasses",
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: "validatingwebhookconfigurations",
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   "mutatingwebhookconfigurations",
	{Group: "autoscaling.k8s.io", Kind: "VerticalPodAutoscaler"}:                    "verticalpodautoscalers",
	{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}:                        "servicemonitors",
	{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}:                        "prometheusrules",
	// Not bundle objects, but installed from the install strategy.
	{Group: "apps", Kind: "Deployment"}: "deployments",
}

// installerVerbs are what the installer, upgrade and gc do with the objects a bundle installs: read (cached and
// metadata reads need list and watch), create, update, patch, and delete what a newer version no longer ships.
var installerVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// loadRoles reads role.yaml: the ClusterRole alm-manager and the Role for leader election.
func loadRoles(t *testing.T) (*rbacv1.ClusterRole, []*rbacv1.Role) {
	t.Helper()
	data, err := os.ReadFile("role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cluster *rbacv1.ClusterRole
	var roles []*rbacv1.Role
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("role.yaml: %v", err)
		}
		switch meta.Kind {
		case "ClusterRole":
			cluster = &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict([]byte(doc), cluster); err != nil {
				t.Fatalf("role.yaml: ClusterRole: %v", err)
			}
		case "Role":
			role := &rbacv1.Role{}
			if err := yaml.UnmarshalStrict([]byte(doc), role); err != nil {
				t.Fatalf("role.yaml: Role: %v", err)
			}
			roles = append(roles, role)
		case "":
		default:
			t.Fatalf("role.yaml: unexpected kind %s", meta.Kind)
		}
	}
	if cluster == nil || cluster.Name != "alm-manager" {
		t.Fatalf("role.yaml has no ClusterRole alm-manager")
	}
	return cluster, roles
}

// verbs returns the verbs the rules grant on group/resource.
func verbs(rules []rbacv1.PolicyRule, group, resource string) []string {
	var out []string
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			out = append(out, r.Verbs...)
		}
	}
	return out
}

func TestRoleHasNoWildcard(t *testing.T) {
	cluster, roles := loadRoles(t)
	all := map[string][]rbacv1.PolicyRule{"ClusterRole " + cluster.Name: cluster.Rules}
	for _, r := range roles {
		all["Role "+r.Namespace+"/"+r.Name] = r.Rules
	}
	for name, rules := range all {
		for i, r := range rules {
			for field, values := range map[string][]string{"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs, "nonResourceURLs": r.NonResourceURLs, "resourceNames": r.ResourceNames} {
				for _, v := range values {
					if strings.Contains(v, "*") {
						t.Errorf("%s: rules[%d].%s has %q: ALM's role must name what it grants (cmd/alm/rbac.go)", name, i, field, v)
					}
				}
			}
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("%s: rules[%d] grants nonResourceURLs %v: ALM needs none (discovery is open to every user)", name, i, r.NonResourceURLs)
			}
		}
	}
}

func TestRoleCoversEveryInstallableKind(t *testing.T) {
	cluster, _ := loadRoles(t)
	kinds := []schema.GroupKind{{Group: "apps", Kind: "Deployment"}}
	for _, k := range policy.InstallableKinds() {
		kinds = append(kinds, k.GroupKind)
	}
	for _, gk := range kinds {
		resource, ok := resources[gk]
		if !ok {
			t.Errorf("%s is installable but this test does not know its resource: add it to resources", gk)
			continue
		}
		have := verbs(cluster.Rules, gk.Group, resource)
		for _, v := range installerVerbs {
			if !slices.Contains(have, v) {
				t.Errorf("ClusterRole alm-manager: %s (%s.%s) lacks verb %s (has %v); the installer needs %v", gk.Kind, resource, gk.Group, v, have, installerVerbs)
			}
		}
	}
	crd := verbs(cluster.Rules, "apiextensions.k8s.io", "customresourcedefinitions")
	for _, v := range []string{"get", "list", "watch", "create", "update", "patch"} {
		if !slices.Contains(crd, v) {
			t.Errorf("ClusterRole alm-manager: customresourcedefinitions lack verb %s (has %v)", v, crd)
		}
	}
	if slices.Contains(crd, "delete") {
		t.Errorf("ClusterRole alm-manager may delete CRDs; ALM never does (it only releases them)")
	}
}

func TestRoleEscalateAndBindOnlyOnRoles(t *testing.T) {
	cluster, roles := loadRoles(t)
	for _, resource := range []string{"roles", "clusterroles"} {
		have := verbs(cluster.Rules, "rbac.authorization.k8s.io", resource)
		for _, v := range []string{"escalate", "bind"} {
			if !slices.Contains(have, v) {
				t.Errorf("ClusterRole alm-manager: %s lacks %s (has %v): ALM cannot install a bundle's RBAC that grants what ALM does not hold", resource, v, have)
			}
		}
	}
	check := func(name string, rules []rbacv1.PolicyRule) {
		for i, r := range rules {
			for _, v := range r.Verbs {
				if v != "escalate" && v != "bind" && v != "impersonate" {
					continue
				}
				if v == "impersonate" {
					t.Errorf("%s: rules[%d] grants impersonate; ALM never impersonates", name, i)
					continue
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						if g != "rbac.authorization.k8s.io" || (res != "roles" && res != "clusterroles") {
							t.Errorf("%s: rules[%d] grants %s on %s.%s; only roles and clusterroles need it", name, i, v, res, g)
						}
					}
				}
			}
		}
	}
	check("ClusterRole alm-manager", cluster.Rules)
	for _, r := range roles {
		check("Role "+r.Namespace+"/"+r.Name, r.Rules)
	}
}

func TestRoleLetsALMRunItsOwnAPI(t *testing.T) {
	cluster, roles := loadRoles(t)
	for _, res := range []string{"catalogsources", "apptypes", "operatorversions"} {
		have := verbs(cluster.Rules, "operators.alm.dev", res)
		for _, v := range []string{"get", "list", "watch"} {
			if !slices.Contains(have, v) {
				t.Errorf("ClusterRole alm-manager: %s lacks %s", res, v)
			}
		}
		if st := verbs(cluster.Rules, "operators.alm.dev", res+"/status"); !slices.Contains(st, "patch") {
			t.Errorf("ClusterRole alm-manager: %s/status lacks patch (status.Patch); has %v", res, st)
		}
	}
	if ev := verbs(cluster.Rules, "events.k8s.io", "events"); !slices.Contains(ev, "create") {
		t.Errorf("ClusterRole alm-manager: events.k8s.io events lack create; has %v", ev)
	}
	leases := false
	for _, r := range roles {
		leases = leases || slices.Contains(verbs(r.Rules, "coordination.k8s.io", "leases"), "update")
	}
	if !leases {
		t.Errorf("role.yaml has no Role granting leases for leader election")
	}
	if l := verbs(cluster.Rules, "coordination.k8s.io", "leases"); len(l) > 0 {
		t.Errorf("ClusterRole alm-manager grants leases cluster-wide (%v); leader election needs them only in ALM's namespace", l)
	}
}
