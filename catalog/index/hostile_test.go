package index

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/configmap"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
	"github.com/almproject/alm/catalog/policy"
	"github.com/almproject/alm/test/docscheck"
)

const hostileCSV = "bad/1.0.0/manifests/bad.v1.0.0.clusterserviceversion.yaml"

// hostileBase is a catalog with a good package and a valid package "bad" (testdata/bad/replaces-self without its
// self-replace), which each case of TestHostileInput makes hostile.
func hostileBase(t *testing.T) string {
	dir := cattest.CopyDir(t, "../testdata/bad/replaces-self")
	cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "  replaces: bad.v1.0.0\n", "")
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	_ = os.RemoveAll(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// billionLaughs is a YAML alias bomb: nine levels of ten aliases, 10^9 strings once expanded.
func billionLaughs(head string) string {
	var sb strings.Builder
	sb.WriteString(head + "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i <= 9; i++ {
		p := "*a" + string(rune('0'+i-1))
		sb.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat(p+",", 9) + p + "]\n")
	}
	return sb.String()
}

const (
	wildcardRule    = "        - apiGroups: [\"*\"]\n          resources: [\"*\"]\n          verbs: [\"*\"]\n"
	hostileWidget   = "  - name: manager\n                image: example.com/bad:latest\n"
	escalateRule    = "        - apiGroups: [rbac.authorization.k8s.io]\n          resources: [roles]\n          verbs: [get, escalate, bind]\n"
	impersonateRule = "        - apiGroups: [\"\"]\n          resources: [users, groups, serviceaccounts]\n          verbs: [impersonate]\n"
)

func crdIn(group string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: deployments." + group +
		"\n  annotations:\n    api-approved.kubernetes.io: \"https://github.com/kubernetes/enhancements/pull/1111\"\nspec:\n  group: " + group +
		"\n  names: {kind: Deployment, listKind: DeploymentList, plural: deployments, singular: deployment}\n  scope: Namespaced\n" +
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n"
}

// TestHostileInput: each case makes package "bad" of a catalog hostile. The rule is reported with the file and a
// detail naming the object and field; an error excludes the bundle, a warning keeps it; the good package beside it
// always resolves. Every row is listed under the hostile-inputs reference (docs/reference/hostile-inputs.md).
func TestHostileInput(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		severity bundle.Severity
		file     string   // a substring of the reported path
		detail   []string // substrings of the detail
		prepare  func(t *testing.T, dir, bad string)
	}{
		{name: "symlink-outside-bundle", rule: bundle.RuleIrregularFile, severity: bundle.SeverityError, file: "manifests/passwd.yaml", detail: []string{"manifests/passwd.yaml", "is a symbolic link", "regular files only"},
			prepare: func(t *testing.T, dir, bad string) {
				symlink(t, "/etc/passwd", filepath.Join(bad, "manifests/passwd.yaml"))
			}},
		{name: "symlink-relative-traversal", rule: bundle.RuleIrregularFile, severity: bundle.SeverityError, file: "manifests/widgets.crd.yaml", detail: []string{"manifests/widgets.crd.yaml"},
			prepare: func(t *testing.T, dir, bad string) {
				symlink(t, "../../../good/1.0.0/manifests/widgets.crd.yaml", filepath.Join(bad, "manifests/widgets.crd.yaml"))
			}},
		{name: "symlinked-manifests-dir", rule: bundle.RuleIrregularFile, severity: bundle.SeverityError, file: "bad/1.0.0/manifests", detail: []string{"manifests"},
			prepare: func(t *testing.T, dir, bad string) {
				symlink(t, filepath.Join(dir, "good/1.0.0/manifests"), filepath.Join(bad, "manifests"))
			}},
		{name: "symlinked-annotations", rule: bundle.RuleIrregularFile, severity: bundle.SeverityError, file: "metadata/annotations.yaml", detail: []string{"metadata/annotations.yaml"},
			prepare: func(t *testing.T, dir, bad string) {
				symlink(t, filepath.Join(dir, "good/1.0.0/metadata/annotations.yaml"), filepath.Join(bad, "metadata/annotations.yaml"))
			}},
		{name: "fifo-in-manifests", rule: bundle.RuleIrregularFile, severity: bundle.SeverityError, file: "manifests/pipe.yaml", detail: []string{"manifests/pipe.yaml is a named pipe"},
			prepare: func(t *testing.T, dir, bad string) {
				if err := syscall.Mkfifo(filepath.Join(bad, "manifests/pipe.yaml"), 0o644); err != nil {
					t.Skip(err)
				}
			}},
		{name: "yaml-alias-bomb-manifest", rule: bundle.RuleMalformedYAML, severity: bundle.SeverityError, file: "manifests/bomb.yaml", detail: []string{"alias"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/bomb.yaml"), billionLaughs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  x: y\n"))
			}},
		{name: "yaml-alias-bomb-annotations", rule: bundle.RuleMalformedYAML, severity: bundle.SeverityError, file: "metadata/annotations.yaml", detail: []string{"alias"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "metadata/annotations.yaml"), billionLaughs(""))
			}},
		{name: "yaml-alias-bomb-fbc", rule: bundle.RuleMalformedFBC, severity: bundle.SeverityError, file: "fbc/catalog.yaml", detail: []string{"alias"},
			prepare: func(t *testing.T, dir, bad string) {
				if err := os.RemoveAll(filepath.Dir(bad)); err != nil {
					t.Fatal(err)
				}
				cattest.WriteFile(t, filepath.Join(dir, "fbc/catalog.yaml"), billionLaughs("schema: olm.package\nname: bad\n"))
			}},
		{name: "deeply-nested-yaml", rule: bundle.RuleMalformedYAML, severity: bundle.SeverityError, file: "manifests/deep.yaml", detail: []string{"exceeded max depth"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/deep.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: "+
					strings.Repeat("[", 200000)+strings.Repeat("]", 200000)+"\n")
			}},
		{name: "deeply-nested-json", rule: bundle.RuleMalformedYAML, severity: bundle.SeverityError, file: "manifests/deep.json", detail: []string{"exceeded max depth"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/deep.json"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":`+
					strings.Repeat("[", 200000)+strings.Repeat("]", 200000)+"}")
			}},
		{name: "50MB-manifest", rule: bundle.RuleBundleTooLarge, severity: bundle.SeverityError, file: "bad/1.0.0", detail: []string{"bytes", "one ConfigMap"},
			prepare: func(t *testing.T, dir, bad string) {
				f, err := os.Create(filepath.Join(bad, "manifests/huge.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(50 << 20); err != nil { // sparse: 50 MB that are never read
					t.Fatal(err)
				}
			}},
		{name: "wildcard-rbac-permissions", rule: policy.RuleWildcardRBAC, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"ClusterServiceVersion bad.v1.0.0", "spec.install.spec.permissions[0].rules[1]", "every verb"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "          verbs: [\"*\"]\n", "          verbs: [\"*\"]\n"+wildcardRule)
			}},
		{name: "wildcard-rbac-cluster-permissions", rule: policy.RuleWildcardRBAC, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.clusterPermissions[0].rules[0]"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "      permissions:\n", "      clusterPermissions:\n      - serviceAccountName: bad\n        rules:\n"+wildcardRule+"      permissions:\n")
			}},
		{name: "wildcard-clusterrole-object", rule: policy.RuleWildcardRBAC, severity: bundle.SeverityWarning, file: "manifests/role.yaml", detail: []string{"ClusterRole everything"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything\nrules:\n"+strings.ReplaceAll(wildcardRule, "    ", ""))
			}},
		{name: "cluster-admin-clusterrolebinding", rule: policy.RulePrivilegedBinding, severity: bundle.SeverityWarning, file: "manifests/binding.yaml", detail: []string{"ClusterRoleBinding bad-admin: roleRef binds ClusterRole cluster-admin"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/binding.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: bad-admin\n"+
					"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: ServiceAccount, name: bad, namespace: default}\n")
			}},
		{name: "cluster-admin-rolebinding", rule: policy.RulePrivilegedBinding, severity: bundle.SeverityWarning, file: "manifests/binding.yaml", detail: []string{"RoleBinding bad-admin"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/binding.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: bad-admin\n"+
					"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: ServiceAccount, name: bad}\n")
			}},
		{name: "admin-rolebinding", rule: policy.RulePrivilegedBinding, severity: bundle.SeverityWarning, file: "manifests/binding.yaml", detail: []string{"RoleBinding bad-admin: roleRef binds ClusterRole admin"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/binding.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: bad-admin\n"+
					"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}\nsubjects:\n- {kind: ServiceAccount, name: bad}\n")
			}},
		{name: "system-role-clusterrolebinding", rule: policy.RulePrivilegedBinding, severity: bundle.SeverityWarning, file: "manifests/binding.yaml", detail: []string{"ClusterRoleBinding bad-admin: roleRef binds ClusterRole system:controller:clusterrole-aggregation-controller"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/binding.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: bad-admin\n"+
					"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: \"system:controller:clusterrole-aggregation-controller\"}\nsubjects:\n- {kind: ServiceAccount, name: bad, namespace: default}\n")
			}},
		{name: "aggregated-clusterrole-object", rule: policy.RuleAggregatedRole, severity: bundle.SeverityWarning, file: "manifests/role.yaml", detail: []string{"ClusterRole gather: aggregationRule gathers"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: gather\n"+
					"aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {kubernetes.io/bootstrapping: rbac-defaults}\nrules: []\n")
			}},
		{name: "aggregate-to-view-secrets", rule: policy.RuleAggregateToUserRoles, severity: bundle.SeverityWarning, file: "manifests/role.yaml",
			detail: []string{"ClusterRole bad-view: label rbac.authorization.k8s.io/aggregate-to-view adds rules[0], which reaches beyond the bundle's own custom resources"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: bad-view\n"+
					"  labels: {rbac.authorization.k8s.io/aggregate-to-view: \"true\"}\nrules:\n- {apiGroups: [\"\"], resources: [secrets], verbs: [get]}\n")
			}},
		{name: "object-in-other-namespace", rule: bundle.RuleOtherNamespace, severity: bundle.SeverityWarning, file: "manifests/service.yaml", detail: []string{"Service bad-metrics", "metadata.namespace \"kube-system\"", "ignored"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/service.yaml"), "apiVersion: v1\nkind: Service\nmetadata:\n  name: bad-metrics\n  namespace: kube-system\nspec:\n  ports:\n  - port: 8080\n")
			}},
		{name: "crd-in-apps", rule: policy.RuleCRDBuiltinGroup, severity: bundle.SeverityError, file: "manifests/builtin.crd.yaml", detail: []string{"deployments.apps", "spec.group \"apps\""},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/builtin.crd.yaml"), crdIn("apps"))
			}},
		{name: "crd-in-batch", rule: policy.RuleCRDBuiltinGroup, severity: bundle.SeverityError, file: "manifests/builtin.crd.yaml", detail: []string{"spec.group \"batch\""},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/builtin.crd.yaml"), crdIn("batch"))
			}},
		{name: "crd-in-rbac-approved", rule: policy.RuleCRDBuiltinGroup, severity: bundle.SeverityError, file: "manifests/builtin.crd.yaml", detail: []string{"spec.group \"rbac.authorization.k8s.io\""},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/builtin.crd.yaml"), crdIn("rbac.authorization.k8s.io"))
			}},
		{name: "crd-in-networking-approved", rule: policy.RuleCRDBuiltinGroup, severity: bundle.SeverityError, file: "manifests/builtin.crd.yaml", detail: []string{"spec.group \"networking.k8s.io\""},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/builtin.crd.yaml"), crdIn("networking.k8s.io"))
			}},
		{name: "privileged-container", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.deployments[0] (bad-controller)", "privileged container manager"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), hostileWidget, hostileWidget+"                securityContext:\n                  privileged: true\n")
			}},
		{name: "hostpath-volume", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"hostPath volume root (/)"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "              containers:\n", "              volumes:\n              - name: root\n                hostPath: {path: /}\n              containers:\n")
			}},
		{name: "host-network", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"host namespaces"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "              containers:\n", "              hostPID: true\n              containers:\n")
			}},
		{name: "added-capability-sys-admin", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.deployments[0] (bad-controller)", "container manager adding capabilities SYS_ADMIN"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), hostileWidget, hostileWidget+"                securityContext:\n                  capabilities:\n                    add: [NET_BIND_SERVICE, SYS_ADMIN]\n")
			}},
		{name: "added-capability-all", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.deployments[0] (bad-controller)", "container manager adding capabilities ALL"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), hostileWidget, hostileWidget+"                securityContext:\n                  capabilities:\n                    add: [ALL]\n")
			}},
		{name: "added-capability-net-admin", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.deployments[0] (bad-controller)", "container manager adding capabilities CAP_NET_ADMIN"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), hostileWidget, hostileWidget+"                securityContext:\n                  capabilities:\n                    add: [CAP_NET_ADMIN]\n")
			}},
		{name: "allow-privilege-escalation", rule: policy.RulePrivilegedPod, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"container manager with allowPrivilegeEscalation: true"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), hostileWidget, hostileWidget+"                securityContext:\n                  allowPrivilegeEscalation: true\n")
			}},
		{name: "rbac-escalate-bind-permissions", rule: policy.RuleRBACEscalation, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"ClusterServiceVersion bad.v1.0.0: spec.install.spec.permissions[0].rules[1] grants the privilege-escalating verbs escalate, bind"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "          verbs: [\"*\"]\n", "          verbs: [\"*\"]\n"+escalateRule)
			}},
		{name: "rbac-impersonate-cluster-permissions", rule: policy.RuleRBACEscalation, severity: bundle.SeverityWarning, file: "bad.v1.0.0.clusterserviceversion.yaml",
			detail: []string{"spec.install.spec.clusterPermissions[0].rules[0] grants the privilege-escalating verbs impersonate"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.ReplaceIn(t, filepath.Join(dir, hostileCSV), "      permissions:\n", "      clusterPermissions:\n      - serviceAccountName: bad\n        rules:\n"+impersonateRule+"      permissions:\n")
			}},
		{name: "rbac-bind-clusterrole-object", rule: policy.RuleRBACEscalation, severity: bundle.SeverityWarning, file: "manifests/role.yaml",
			detail: []string{"ClusterRole binder: rules[0] grants the privilege-escalating verbs bind"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: binder\nrules:\n"+
					"- apiGroups: [rbac.authorization.k8s.io]\n  resources: [clusterroles]\n  verbs: [get, bind]\n")
			}},
		{name: "rbac-star-verbs-on-rbac-objects", rule: policy.RuleRBACEscalation, severity: bundle.SeverityWarning, file: "manifests/role.yaml",
			detail: []string{"ClusterRole rbac-writer: rules[0] grants the privilege-escalating verbs escalate, bind"},
			prepare: func(t *testing.T, dir, bad string) {
				cattest.WriteFile(t, filepath.Join(bad, "manifests/role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: rbac-writer\nrules:\n"+
					"- apiGroups: [rbac.authorization.k8s.io]\n  resources: [clusterroles, clusterrolebindings, roles, rolebindings]\n  verbs: [\"*\"]\n")
			}},
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
	}
	assertDocumented(t, "TestHostileInput", names)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := hostileBase(t)
			tt.prepare(t, dir, filepath.Join(dir, "bad/1.0.0"))
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			contents, err := fbc.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			d, alloc := time.Since(start), after.TotalAlloc-before.TotalAlloc
			t.Logf("loaded in %s, %d MB allocated", d.Round(time.Millisecond), alloc>>20)
			if d > hostileLoadLimit || alloc > hostileAllocLimit {
				t.Errorf("load took %s and allocated %d MB; every row must load in under %s and %d MB", d, alloc>>20, hostileLoadLimit, hostileAllocLimit>>20)
			}
			ix := New(Catalog{Name: "test", Contents: contents})
			assertHostile(t, ix, dir, tt.rule, tt.severity, tt.file, tt.detail)
		})
	}
}

// assertHostile checks the problem and that the catalog keeps serving: good resolves, bad only with a warning.
func assertHostile(t *testing.T, ix *Index, prefix, rule string, severity bundle.Severity, file string, detail []string) {
	t.Helper()
	var found *bundle.Problem
	for _, p := range ix.Problems() {
		if p.Rule == rule && p.Severity == severity && strings.Contains(p.Path, file) {
			found = &p
			break
		}
	}
	if found == nil {
		t.Fatalf("no %s %s problem at %s; got:\n%s", severity, rule, file, cattest.ProblemLines(ix.Problems()))
	}
	t.Logf("%s: %s: %s", strings.TrimPrefix(found.Path, prefix+"/"), found.Rule, found.Detail)
	if !strings.HasPrefix(found.Path, prefix) {
		t.Errorf("problem path %q is not under %q", found.Path, prefix)
	}
	for _, d := range detail {
		if !strings.Contains(found.Detail, d) {
			t.Errorf("detail %q does not contain %q", found.Detail, d)
		}
	}
	if res, err := ix.Resolve(Request{Package: "good"}); err != nil || res.Chosen == nil || res.Chosen.Name != "good.v1.1.0" {
		t.Errorf("good package does not resolve to good.v1.1.0: %v\n%s", err, cattest.ProblemLines(ix.Problems()))
	}
	res, err := ix.Resolve(Request{Package: "bad"})
	chosen := err == nil && res.Chosen != nil
	if severity == bundle.SeverityError && chosen {
		t.Errorf("bad bundle was not excluded:\n%s", res.Explain())
	}
	if severity == bundle.SeverityWarning && !chosen {
		t.Errorf("a warning excluded the bad bundle: %v\n%s", err, cattest.ProblemLines(ix.Problems()))
	}
}

// tarGz is a gzip of a tar of the given entries.
func tarGz(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write(body)
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// TestHostileConfigMaps: hostile bundle ConfigMaps next to a good one. Each is refused with the ConfigMap's name
// and the rule; the good ConfigMap still loads and resolves.
func TestHostileConfigMaps(t *testing.T) {
	dir := "../testdata/bad/replaces-self/good/1.1.0"
	b, problems := bundle.Load(dir)
	if b == nil {
		t.Fatal(problems)
	}
	good, err := configmap.Encode(b, dir, "ops", "ns")
	if err != nil {
		t.Fatal(err)
	}
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg} }
	bomb := func() []byte { // 8 MiB of zeros in a 8 KiB gzip stream
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, 8<<20))
		_ = zw.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name   string
		rule   string
		detail string
		data   func() []byte
	}{
		{"tar-member-dotdot", bundle.RuleConfigMap, `unexpected tar entry "../x"`, func() []byte { return tarGz(t, reg("../x")) }},
		{"tar-member-nested-dotdot", bundle.RuleConfigMap, `unexpected tar entry "manifests/../../x"`, func() []byte { return tarGz(t, reg("manifests/../../x")) }},
		{"tar-member-absolute", bundle.RuleConfigMap, `unexpected tar entry "/etc/cron.d/x"`, func() []byte { return tarGz(t, reg("/etc/cron.d/x")) }},
		{"tar-member-symlink", bundle.RuleConfigMap, `unexpected tar entry "manifests/passwd.yaml"`, func() []byte {
			return tarGz(t, &tar.Header{Name: "manifests/passwd.yaml", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
		}},
		{"tar-member-hardlink", bundle.RuleConfigMap, `unexpected tar entry "manifests/x.yaml"`, func() []byte {
			return tarGz(t, &tar.Header{Name: "manifests/x.yaml", Linkname: "/etc/passwd", Typeflag: tar.TypeLink})
		}},
		{"tar-member-outside-bundle-dirs", bundle.RuleConfigMap, `unexpected tar entry "bin/sh"`, func() []byte { return tarGz(t, reg("bin/sh")) }},
		{"gzip-bomb", bundle.RuleBundleTooLarge, "decompresses to more than", bomb},
		{"configmap-over-1MiB", bundle.RuleConfigMapTooLarge, "more than the 1048576 a ConfigMap holds", func() []byte { return make([]byte, configmap.MaxData+1) }},
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
	}
	assertDocumented(t, "TestHostileConfigMaps", names)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := good.DeepCopy()
			bad.Name = "ops-hostile"
			bad.Annotations[configmap.AnnotationPackage], bad.Annotations[configmap.AnnotationBundle] = "bad", "bad.v1.0.0"
			delete(bad.Annotations, configmap.AnnotationDigest)
			bad.BinaryData[configmap.Key] = tt.data()
			c := configmap.Load([]corev1.ConfigMap{*bad, *good})
			if len(c.Problems) != 1 {
				t.Fatalf("want one problem, got %v", c.Problems)
			}
			p := c.Problems[0]
			if p.Rule != tt.rule || p.Path != "configmap/ns/ops-hostile" || !strings.Contains(p.Detail, tt.detail) || p.Bundle != "bad.v1.0.0" {
				t.Errorf("want %s at configmap/ns/ops-hostile with %q, got %s (bundle %q)", tt.rule, tt.detail, p, p.Bundle)
			}
			t.Logf("%s", p)
			ix := New(Catalog{Name: "ops", Contents: c})
			if res, err := ix.Resolve(Request{Package: "good"}); err != nil || res.Chosen == nil || res.Chosen.Name != "good.v1.1.0" {
				t.Errorf("good ConfigMap does not resolve: %v", err)
			}
		})
	}
}

// The bounds every row of TestHostileInput is held to (the hostile-inputs reference, rows 6 to 10, state them; TestHostileBoundsDocumented).
const (
	hostileLoadLimit  = time.Second
	hostileAllocLimit = 200 << 20
)

// assertDocumented checks that the hostile-inputs reference (docs/reference/hostile-inputs.md) and the cases of a test agree:
// every case has a row, and every case a row names exists.
func assertDocumented(t *testing.T, test string, names []string) {
	t.Helper()
	rows, err := docscheck.HostileRows("../../" + docscheck.HostilePage)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docscheck.CrossCheck(rows, test, "", names) {
		t.Error(p)
	}
}

// TestHostileBoundsDocumented: the hostile-inputs reference states the time and memory bounds of the parser rows exactly as
// TestHostileInput asserts them, and no row claims a speed that no test asserts.
func TestHostileBoundsDocumented(t *testing.T) {
	rows, err := docscheck.HostileRows("../../" + docscheck.HostilePage)
	if err != nil {
		t.Fatal(err)
	}
	bound := fmt.Sprintf("in ≤ %s and ≤ %d MB allocated (asserted", hostileLoadLimit, hostileAllocLimit>>20)
	for _, name := range []string{"yaml-alias-bomb-manifest", "deeply-nested-yaml"} {
		row := docscheck.RowNaming(rows, "TestHostileInput/"+name)
		if row == nil || !strings.Contains(row.Text, bound) {
			t.Errorf("%s: the row of TestHostileInput/%s must state %q", docscheck.HostilePage, name, bound)
		}
	}
	for _, r := range rows {
		if strings.Contains(r.Text, "in milliseconds") {
			t.Errorf("%s row %d says \"in milliseconds\", which no test asserts", docscheck.HostilePage, r.Number)
		}
	}
}
