package v1alpha1_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{
		CRDDirectoryPaths:   []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		NoControllerManager: true,
	}, &cp))
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	if u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	return u
}

const validAppType = `
apiVersion: operators.alm.dev/v1alpha1
kind: AppType
metadata: {name: NAME}
spec: {package: etcd}
`

const validOperatorVersion = `
apiVersion: operators.alm.dev/v1alpha1
kind: OperatorVersion
metadata: {name: NAME}
spec:
  packageName: etcd
  version: 0.9.4
  bundle: {digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
  replaces: etcdoperator.v0.9.2
  source: {name: catalog, namespace: default}
  rollbackFrom: {name: etcdoperator.v0.9.6, version: 0.9.6}
  install:
    strategy: deployment
    spec: {deployments: []}
`

// The API server rejects invalid objects with a message that names the field and the rule.
func TestInvalidObjectsAreRejected(t *testing.T) {
	cases := []struct {
		name     string
		manifest string
		want     []string // substrings of the API server's message
	}{{
		name:     "AppType without package",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {channel: stable}",
		want:     []string{"spec.package", "Required value"},
	}, {
		name:     "AppType package that is not a DNS name",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {package: My_Operator}",
		want:     []string{"spec.package", "should match"},
	}, {
		name:     "AppType approval not Automatic or Manual",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {package: etcd, approval: Sometimes}",
		want:     []string{"spec.approval", `Unsupported value: "Sometimes"`, `"Automatic"`, `"Manual"`},
	}, {
		name:     "AppType approvedVersion that is not semver",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {package: etcd, approval: Manual, approvedVersion: v1.2}",
		want:     []string{"spec.approvedVersion", "should match"},
	}, {
		name:     "AppType approvedVersion with Automatic approval",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {package: etcd, approvedVersion: 1.2.3}",
		want:     []string{"spec", "approvedVersion is only used with approval: Manual"},
	}, {
		name:     "AppType versionRange with stray characters",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: AppType\nmetadata: {name: NAME}\nspec: {package: etcd, versionRange: '>=1.0.0; rm -rf'}",
		want:     []string{"spec.versionRange", "should match"},
	}, {
		name:     "OperatorVersion with a version that is not semver",
		manifest: strings.Replace(validOperatorVersion, "version: 0.9.4", "version: '1.2'", 1),
		want:     []string{"spec.version", "version must be a semantic version"},
	}, {
		name:     "OperatorVersion without install strategy",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: OperatorVersion\nmetadata: {name: NAME}\nspec: {packageName: etcd, version: 1.0.0}",
		want:     []string{"spec", "install is required unless bundle.image names the bundle image to read it from"},
	}, {
		name:     "OperatorVersion bundle digest that is not a sha256 digest",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: OperatorVersion\nmetadata: {name: NAME}\nspec: {packageName: etcd, version: 1.0.0, bundle: {image: r.example/b@sha256:00, digest: md5:00}}",
		want:     []string{"spec.bundle.digest", "should match"},
	}, {
		name:     "OperatorVersion without packageName",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: OperatorVersion\nmetadata: {name: NAME}\nspec: {version: 1.0.0, install: {strategy: deployment}}",
		want:     []string{"spec.packageName", "Required value"},
	}, {
		name:     "CatalogSource with both configMap and directory",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {configMap: {}, directory: {path: /bundles}}",
		want:     []string{"spec", "exactly one of configMap, directory or image must be set"},
	}, {
		name:     "CatalogSource with neither configMap nor directory",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {displayName: empty}",
		want:     []string{"spec", "exactly one of configMap, directory or image must be set"},
	}, {
		name:     "CatalogSource with both directory and image",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {directory: {path: /bundles}, image: {ref: r.example/c:1}}",
		want:     []string{"spec", "exactly one of configMap, directory or image must be set"},
	}, {
		name:     "CatalogSource image by digest with a poll interval",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {image: {ref: 'r.example/c@sha256:0123456789012345678901234567890123456789012345678901234567890123', pollInterval: 5m}}",
		want:     []string{"spec.image", "pollInterval applies to a tag"},
	}, {
		name:     "CatalogSource directory that is not absolute",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {directory: {path: bundles}}",
		want:     []string{"spec.directory.path", "should match '^/'"},
	}, {
		name:     "CatalogSource priority out of range",
		manifest: "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: NAME}\nspec: {priority: 5000, configMap: {}}",
		want:     []string{"spec.priority", "less than or equal to 1000"},
	}}
	c := newClient(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, strings.Replace(tc.manifest, "NAME", "invalid-"+string(rune('a'+i)), 1))
			err := c.Create(t.Context(), obj)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: got %v, want an Invalid error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err.Error(), w)
				}
			}
		})
	}
}

// Fields that identify what was installed cannot change after creation, and the optional ones can be neither added
// nor removed.
func TestImmutableFields(t *testing.T) {
	c := newClient(t)
	withoutBundle := strings.Replace(validOperatorVersion, "  bundle: {digest:", "  # bundle: {digest:", 1)
	cases := []struct {
		name     string
		manifest string
		path     []string
		value    any // nil: the field is removed
		want     string
	}{
		{"AppType package", validAppType, []string{"spec", "package"}, "prometheus", "package is immutable"},
		{"OperatorVersion version", validOperatorVersion, []string{"spec", "version"}, "0.9.5", "version is immutable"},
		{"OperatorVersion packageName", validOperatorVersion, []string{"spec", "packageName"}, "other", "packageName is immutable"},
		{"OperatorVersion bundle digest", validOperatorVersion, []string{"spec", "bundle"}, map[string]any{"digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"}, "bundle is immutable"},
		// Removing an optional field does not run the field's own rules: the rules on spec refuse it (issue 34, item 4).
		{"OperatorVersion bundle removed", validOperatorVersion, []string{"spec", "bundle"}, nil, "bundle is immutable"},
		{"OperatorVersion bundle added", withoutBundle, []string{"spec", "bundle"}, map[string]any{"digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"}, "bundle is immutable"},
		{"OperatorVersion source changed", validOperatorVersion, []string{"spec", "source"}, map[string]any{"name": "other", "namespace": "default"}, "source is immutable"},
		{"OperatorVersion source removed", validOperatorVersion, []string{"spec", "source"}, nil, "source is immutable"},
		{"OperatorVersion rollbackFrom removed", validOperatorVersion, []string{"spec", "rollbackFrom"}, nil, "rollbackFrom is immutable"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, strings.Replace(tc.manifest, "NAME", "immutable-"+string(rune('a'+i)), 1))
			if err := c.Create(t.Context(), obj); err != nil {
				t.Fatalf("creating a valid object: %v", err)
			}
			if tc.value == nil {
				unstructured.RemoveNestedField(obj.Object, tc.path...)
			} else if err := unstructured.SetNestedField(obj.Object, tc.value, tc.path...); err != nil {
				t.Fatal(err)
			}
			err := c.Update(t.Context(), obj)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), strings.Join(tc.path, ".")) {
				t.Fatalf("update of %s: got %v, want Invalid naming %s and %q", strings.Join(tc.path, "."), err, strings.Join(tc.path, "."), tc.want)
			}
		})
	}
}

// Valid objects are accepted, and defaults are applied.
func TestValidObjectsAndDefaults(t *testing.T) {
	c := newClient(t)
	at := object(t, strings.Replace(validAppType, "NAME", "defaults", 1))
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatalf("valid AppType rejected: %v", err)
	}
	if got, _, _ := unstructured.NestedString(at.Object, "spec", "approval"); got != "Automatic" {
		t.Errorf("spec.approval defaulted to %q, want Automatic", got)
	}
	ov := object(t, strings.Replace(validOperatorVersion, "NAME", "valid-ov", 1))
	if err := c.Create(t.Context(), ov); err != nil {
		t.Fatalf("valid OperatorVersion rejected: %v", err)
	}
	// The install strategy is kept as written (schemaless), not pruned.
	if got, _, _ := unstructured.NestedString(ov.Object, "spec", "install", "strategy"); got != "deployment" {
		t.Errorf("spec.install.strategy = %q after create, want deployment", got)
	}
	cs := object(t, "apiVersion: operators.alm.dev/v1alpha1\nkind: CatalogSource\nmetadata: {name: local}\nspec: {directory: {path: /bundles}, priority: 10}")
	if err := c.Create(t.Context(), cs); err != nil {
		t.Fatalf("valid CatalogSource rejected: %v", err)
	}
}
