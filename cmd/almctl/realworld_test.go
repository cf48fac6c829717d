package main

import (
	"path/filepath"
	"strings"
	"testing"
)

const realworld = "../../catalog/testdata/realworld"

// mixedCatalog is a catalog with package etcd (bundles without minKubeVersion) and package rw: a bundle that ships a
// CRD its CSV does not own (accepted, with a warning) and one with an invalid CSV name (refused).
func mixedCatalog(t *testing.T) string {
	dir := t.TempDir()
	copyTree(t, etcd, filepath.Join(dir, "etcd"))
	copyTree(t, realworld+"/extra-crd", filepath.Join(dir, "rw", "1.0.0"))
	copyTree(t, realworld+"/csv-name-invalid", filepath.Join(dir, "rw", "0.9.0"))
	return dir
}

// Issue 10: asking about one package shows its answer first, then its own problems and one line counting the rest.
func TestResolveOnePackageOfAMixedCatalog(t *testing.T) {
	dir := mixedCatalog(t)
	stdout, stderr, code := run(t, nil, "catalog", "resolve", dir, "--package", "etcd")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "package etcd") || !strings.HasSuffix(stdout, "\n") || !strings.Contains(stdout, "chosen: etcdoperator.v0.9.4") {
		t.Errorf("stdout should be the answer, ending in a newline:\n%q", stdout)
	}
	for _, other := range []string{"crd-not-owned", "invalid-csv-name", "rw.v1.0.0"} {
		if strings.Contains(stderr, other) {
			t.Errorf("stderr shows another package's problem %q:\n%s", other, stderr)
		}
	}
	want := "the rest of the catalog has 1 errors and 1 warnings (almctl bundle validate " + dir + " lists them)"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// Issue 10: a missing minKubeVersion is one short line, each bundle only with -v.
func TestMinKubeVersionSaidOnce(t *testing.T) {
	stdout, _, code := run(t, nil, "bundle", "validate", etcd)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if strings.Count(stdout, "min-kube-version") != 1 || !strings.Contains(stdout, "2 bundles do not set spec.minKubeVersion (min-kube-version: warning; -v lists them)") {
		t.Errorf("want one summary line:\n%s", stdout)
	}
	if strings.Contains(stdout, "not informed") {
		t.Errorf("the long operator-framework text is shown:\n%s", stdout)
	}
	stdout, _, _ = run(t, nil, "bundle", "validate", etcd, "-v")
	if strings.Count(stdout, "min-kube-version: warning: spec.minKubeVersion is not set") != 2 {
		t.Errorf("-v should list both bundles:\n%s", stdout)
	}
}

// Issue 10/11: a bundle with a CRD its CSV does not own is accepted (a warning names the file), and so is one that
// ships the install strategy's ServiceAccount.
func TestRealWorldBundlesAccepted(t *testing.T) {
	dir := mixedCatalog(t)
	stdout, stderr, code := run(t, nil, "catalog", "resolve", dir, "--package", "rw")
	if code != 0 || !strings.Contains(stdout, "chosen: rw.v1.0.0") {
		t.Fatalf("exit %d, want rw.v1.0.0 chosen\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, filepath.Join(dir, "rw/1.0.0/manifests/gadgets.crd.yaml")+": crd-not-owned: warning:") {
		t.Errorf("stderr lacks the crd-not-owned warning with the file:\n%s", stderr)
	}
	if !strings.Contains(stdout, "RejectedBundle: invalid-csv-name") {
		t.Errorf("the refused bundle should say why:\n%s", stdout)
	}
	stdout, _, code = run(t, nil, "bundle", "validate", realworld+"/sa-duplicate", realworld+"/v1beta1-k8s-io-unapproved")
	if code != 1 || !strings.Contains(stdout, "rw-operator.sa.yaml: service-account-merged: warning:") ||
		!strings.Contains(stdout, "widgets.crd.yaml: crd-api-approval: CRD widgets.rw.storage.k8s.io") {
		t.Errorf("exit %d; want the merged ServiceAccount warning and the api-approval error:\n%s", code, stdout)
	}
}
