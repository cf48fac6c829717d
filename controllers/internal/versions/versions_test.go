package versions

import (
	"context"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

func ov(name, v string, mutate ...func(*operatorsv1alpha1.OperatorVersion)) operatorsv1alpha1.OperatorVersion {
	o := operatorsv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       operatorsv1alpha1.OperatorVersionSpec{PackageName: "etcd", Version: version.OperatorVersion{Version: semver.MustParse(v)}},
	}
	for _, m := range mutate {
		m(&o)
	}
	return o
}

func replaces(n string) func(*operatorsv1alpha1.OperatorVersion) {
	return func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Replaces = n }
}

func TestReplaces(t *testing.T) {
	v1 := ov("etcd.v1.0.0", "1.0.0")
	cases := []struct {
		name  string
		newer operatorsv1alpha1.OperatorVersion
		want  bool
	}{
		{"replaces names it", ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0")), true},
		{"skips names it", ov("etcd.v2.0.0", "2.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Skips = []string{"etcd.v1.0.0"} }), true},
		{"skipRange covers it", ov("etcd.v2.0.0", "2.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.SkipRange = ">=0.9.0 <2.0.0" }), true},
		{"skipRange does not cover it", ov("etcd.v2.0.0", "2.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.SkipRange = ">=1.1.0 <2.0.0" }), false},
		{"invalid skipRange", ov("etcd.v2.0.0", "2.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.SkipRange = "not a range" }), false},
		{"skipRange of an older version", ov("etcd.v0.5.0", "0.5.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.SkipRange = "<2.0.0" }), false},
		{"other package", ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0"), func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.PackageName = "other" }), false},
		{"other namespace", ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0"), func(o *operatorsv1alpha1.OperatorVersion) { o.Namespace = "other" }), false},
		{"itself", ov("etcd.v1.0.0", "1.0.0", replaces("etcd.v1.0.0")), false},
		{"unrelated", ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.5.0")), false},
		{"replaces names a newer version", ov("etcd.v0.5.0", "0.5.0", replaces("etcd.v1.0.0")), false},
		{"skips names the same version", ov("etcd.v1.0.0-b", "1.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Skips = []string{"etcd.v1.0.0"} }), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Replaces(&tc.newer, &v1); got != tc.want {
				t.Fatalf("Replaces = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChainFollowsFailedIntermediates(t *testing.T) {
	all := []operatorsv1alpha1.OperatorVersion{
		ov("etcd.v1.0.0", "1.0.0"),
		ov("etcd.v2.0.0", "2.0.0", replaces("etcd.v1.0.0")),
		ov("etcd.v3.0.0", "3.0.0", replaces("etcd.v2.0.0")),
		ov("other", "9.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.PackageName = "other" }),
	}
	chain := Chain(&all[2], all)
	if len(chain) != 2 || chain[0].Name != "etcd.v2.0.0" || chain[1].Name != "etcd.v1.0.0" {
		t.Fatalf("Chain(v3) = %v, want [v2 v1]", names(chain))
	}
	if s := Successors(&all[0], all); len(s) != 1 || s[0].Name != "etcd.v2.0.0" {
		t.Fatalf("Successors(v1) = %v, want [v2]", names(s))
	}
	if p := Predecessors(&all[0], all); len(p) != 0 {
		t.Fatalf("Predecessors(v1) = %v, want none", names(p))
	}
}

func names(ovs []*operatorsv1alpha1.OperatorVersion) []string {
	var out []string
	for _, o := range ovs {
		out = append(out, o.Name)
	}
	return out
}

func TestInstalled(t *testing.T) {
	cases := []struct {
		name string
		all  []operatorsv1alpha1.OperatorVersion
		want string
	}{
		{"nothing installed", nil, ""},
		{"one version", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0")}, "p.v1"},
		{"upgrade in progress: the replacing version", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0"), ov("p.v2", "2.0.0", replaces("p.v1"))}, "p.v2"},
		{"failed intermediate and its replacement", []operatorsv1alpha1.OperatorVersion{ov("p.v1", "1.0.0"), ov("p.v2", "2.0.0", replaces("p.v1")), ov("p.v3", "3.0.0", replaces("p.v2"))}, "p.v3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if h := Installed(tc.all); h != nil {
				got = h.Name
			}
			if got != tc.want {
				t.Fatalf("Installed = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCreateCopiesNoOptIns: the operators.alm.dev/allow-* annotations of the AppType and of the CatalogSource the
// version comes from are not copied onto the OperatorVersion: the installer reads opt-ins only from a cluster admin's
// objects when a plan breaks a rule (installer.Installer.optIns), never from the AppType or the OperatorVersion.
func TestCreateCopiesNoOptIns(t *testing.T) {
	const wildcard, privileged = "operators.alm.dev/allow-wildcard-rbac", "operators.alm.dev/allow-privileged-pod"
	got := createWithOptIns(t, map[string]string{wildcard: "true"}, map[string]string{privileged: "true"},
		&operatorsv1alpha1.CatalogReference{Namespace: "alm-system", Name: "trusted"})
	if len(got) != 0 {
		t.Errorf("annotations = %v, want none", got)
	}
}

// createWithOptIns creates an OperatorVersion for an AppType annotated appType, from source, with the CatalogSource
// alm-system/trusted annotated catalogSource (none when nil), and returns the OperatorVersion's annotations.
func createWithOptIns(t *testing.T, appType, catalogSource map[string]string, source *operatorsv1alpha1.CatalogReference) map[string]string {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := operatorsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	if catalogSource != nil {
		b = b.WithObjects(&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: "alm-system", Name: "trusted", Annotations: catalogSource}})
	}
	c := b.Build()
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "etcd", UID: "u1", Annotations: appType}, Spec: operatorsv1alpha1.AppTypeSpec{Package: "etcd"}}
	o := ov("etcd.v1.0.0", "1.0.0", func(o *operatorsv1alpha1.OperatorVersion) { o.Spec.Source = source })
	if err := Create(context.Background(), c, at, &o, nil); err != nil {
		t.Fatal(err)
	}
	got := &operatorsv1alpha1.OperatorVersion{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(&o), got); err != nil {
		t.Fatal(err)
	}
	return got.Annotations
}
