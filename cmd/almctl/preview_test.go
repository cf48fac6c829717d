package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/bundlediff"
	"github.com/almproject/alm/test/harness"
)

const konnect = "../../bundles/konnect-operator"

// konnectPreview is `almctl bundle diff` of the Konnect operator's 1.0.0 and 1.1.0, as the README shows it.
const konnectPreview = `konnect-operator 1.0.0 -> 1.1.0: ~1 Deployment (image), ~1 CRD, 0 refused
objects:
  ~ Deployment konnect-operator: container manager: image alm.local/konnect-operator:1.0.0 -> alm.local/konnect-operator:1.1.0
RBAC rules: none
CRDs:
  ~ CustomResourceDefinition kongroutes.configuration.konghq.com: printer columns of v1alpha1; safe: keeps stored version v1alpha1
webhooks: none
`

func TestBundleDiff(t *testing.T) {
	stdout, stderr, code := run(t, nil, "bundle", "diff", konnect+"/1.0.0", konnect+"/1.1.0")
	if code != 0 || stdout != konnectPreview {
		t.Fatalf("bundle diff: exit %d\n%s\nwant:\n%s\n%s", code, stdout, konnectPreview, stderr)
	}
	// A version that grants itself escalate on ClusterRoles: listed, refused, exit code 3.
	escalating := filepath.Join(t.TempDir(), "1.1.0")
	copyTree(t, konnect+"/1.1.0", escalating)
	csv := filepath.Join(escalating, "manifests", "konnect-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "      clusterPermissions:\n      - rules:\n"
	if !strings.Contains(string(data), anchor) {
		t.Fatalf("%s has no %q", csv, anchor)
	}
	data = []byte(strings.Replace(string(data), anchor, anchor+
		"        - apiGroups: [rbac.authorization.k8s.io]\n          resources: [clusterroles]\n          verbs: [escalate, bind]\n", 1))
	if err := os.WriteFile(csv, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = run(t, nil, "bundle", "diff", konnect+"/1.1.0", escalating)
	for _, want := range []string{"konnect-operator 1.1.0 -> 1.1.0: +1 RBAC rule, 1 refused\n", "+ ClusterRole konnect-operator (cluster): bind,escalate on rbac.authorization.k8s.io/clusterroles",
		"REFUSED: rbac-escalation: grants escalate, bind; ALM refuses to install it unless a cluster admin annotates the Namespace (or a CatalogSource in ALM's namespace, for every package it serves) operators.alm.dev/allow-rbac-escalation: \"true\""} {
		if code != 3 || !strings.Contains(stdout, want) {
			t.Fatalf("bundle diff of an escalating version: exit %d, want 3 and %q\n%s\n%s", code, want, stdout, stderr)
		}
	}
	if _, stderr, code := run(t, nil, "bundle", "diff", konnect+"/1.0.0", t.TempDir()); code != 1 || !strings.Contains(stderr, "not a valid bundle") {
		t.Errorf("bundle diff with an empty directory: exit %d, %s", code, stderr)
	}
}

// TestResolveShowsDeprecations: a deprecations.yaml beside the bundles of a directory catalog; resolve prefers the
// version that is not deprecated, says why, and shows the installed version's deprecation.
func TestResolveShowsDeprecations(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0"} { // the versions this test knows, whatever comes later
		copyTree(t, filepath.Join(konnect, v), filepath.Join(dir, "konnect-operator", v))
	}
	deprecations := "schema: olm.deprecations\npackage: konnect-operator\nentries:\n" +
		"- reference: {schema: olm.bundle, name: konnect-operator.v1.3.0}\n  message: 1.3.0 changes the tag scheme\n" +
		"- reference: {schema: olm.bundle, name: konnect-operator.v1.1.0}\n  message: 1.1.0 has a known bug\n"
	if err := os.WriteFile(filepath.Join(dir, "konnect-operator", "deprecations.yaml"), []byte(deprecations), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, nil, "catalog", "resolve", dir, "--package", "konnect-operator", "--from", "1.1.0")
	for _, want := range []string{"chosen: konnect-operator.v1.2.0 (1.2.0)",
		"deprecated: bundle konnect-operator.v1.1.0 deprecated: 1.1.0 has a known bug",
		"konnect-operator.v1.3.0 (1.3.0) [" + dir + "]: Deprecated: bundle konnect-operator.v1.3.0 deprecated: 1.3.0 changes the tag scheme; konnect-operator.v1.2.0, which is not deprecated, is preferred"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("catalog resolve: exit %d, output lacks %q\n%s\n%s", code, want, stdout, stderr)
		}
	}
}

// TestBundleDiffOfImages: bundle images pushed from the same directories give the same preview.
func TestBundleDiffOfImages(t *testing.T) {
	reg := newRegistry(t, nil)
	var refs []string
	for _, v := range []string{"1.0.0", "1.1.0"} {
		refs = append(refs, mustRun(t, noCredentials(t), "bundle", "push", "--insecure", konnect+"/"+v, reg.ref("bundles/konnect-operator:"+v)))
	}
	stdout, stderr, code := run(t, noCredentials(t), "bundle", "diff", "--insecure", reg.ref("bundles/konnect-operator:1.0.0"), refs[1])
	if code != 0 || stdout != konnectPreview {
		t.Fatalf("bundle diff of images: exit %d\n%s\nwant:\n%s\n%s", code, stdout, konnectPreview, stderr)
	}
	if _, stderr, code := run(t, noCredentials(t), "bundle", "diff", "--insecure", refs[0], reg.ref("bundles/nothing:1.0.0")); code != 1 || !strings.Contains(stderr, "bundles/nothing:1.0.0") {
		t.Errorf("bundle diff with a missing image: exit %d, %s", code, stderr)
	}
}

// TestUpgradePreviewOfKonnect: `almctl upgrade preview` of an AppType whose status holds the Konnect operator's
// 1.0.0 -> 1.1.0 preview (as the AppType loop writes it) prints it and how to approve it, as the README shows.
func TestUpgradePreviewOfKonnect(t *testing.T) {
	c := harness.Client(t, cp)
	harness.EnsureNamespace(t, c, "konnect-system")
	at := &almv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "konnect-system", Name: "konnect"},
		Spec: almv1alpha1.AppTypeSpec{Package: "konnect-operator", Approval: almv1alpha1.ApprovalManual}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), at) })
	var manifests []*bundle.Manifests
	for _, v := range []string{"1.0.0", "1.1.0"} {
		b, problems := bundle.Load(konnect + "/" + v)
		if b == nil {
			t.Fatal(problems)
		}
		m, err := b.Manifests()
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m)
	}
	at.Status = almv1alpha1.AppTypeStatus{InstalledVersion: "1.0.0", AvailableUpgrade: "1.1.0",
		UpgradePreview: bundlediff.Diff(manifests[0], manifests[1]).Preview("1.0.0", "1.1.0")}
	if err := c.Status().Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBECONFIG=" + cp.KubeconfigPath}
	want := konnectPreview + "\napprove it: kubectl -n konnect-system patch apptype konnect --type merge -p '{\"spec\":{\"approvedVersion\":\"1.1.0\"}}'\n"
	stdout, stderr, code := run(t, env, "upgrade", "preview", "konnect", "-n", "konnect-system")
	if code != 0 || stdout != want {
		t.Fatalf("upgrade preview: exit %d\n%s\nwant:\n%s\n%s", code, stdout, want, stderr)
	}
	// Approved: the same preview, no hint.
	at.Spec.ApprovedVersion = "1.1.0"
	if err := c.Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	if stdout, _, code := run(t, env, "upgrade", "preview", "konnect", "-n", "konnect-system"); code != 0 || stdout != konnectPreview {
		t.Errorf("upgrade preview once approved: exit %d\n%s", code, stdout)
	}
}
