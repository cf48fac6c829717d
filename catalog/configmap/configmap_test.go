package configmap

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/index"
)

func TestConfigMapRoundTrip(t *testing.T) {
	dir := "../testdata/etcd/0.9.4"
	b, problems := bundle.Load(dir)
	if b == nil {
		t.Fatal(problems)
	}
	cm, err := Encode(b, dir, "ops", "olm")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(b, dir, "ops", "olm")
	if !reflect.DeepEqual(cm, again) {
		t.Error("encoding is not deterministic")
	}
	if cm.Name != "ops-etcdoperator.v0.9.4" || cm.Namespace != "olm" || cm.Labels[almv1alpha1.LabelCatalog] != "ops" ||
		cm.Labels[LabelPackage] != "etcd" || cm.Annotations[AnnotationVersion] != "0.9.4" || !strings.HasPrefix(cm.Annotations[AnnotationDigest], "sha256:") {
		t.Errorf("metadata: %+v", cm.ObjectMeta)
	}
	got, problems := Decode(cm)
	if got == nil {
		t.Fatal(problems)
	}
	if got.Name != b.Name || got.Package != "etcd" || !got.Version.EQ(b.Version) || got.Path != "configmap/olm/ops-etcdoperator.v0.9.4" {
		t.Errorf("decoded %+v", got)
	}
	c := Load([]corev1.ConfigMap{*cm})
	if len(c.Bundles) != 1 {
		t.Errorf("Load: %+v", c)
	}
}

func TestConfigMapBad(t *testing.T) {
	b, _ := bundle.Load("../testdata/etcd/0.9.2")
	good, err := Encode(b, "../testdata/etcd/0.9.2", "ops", "ns")
	if err != nil {
		t.Fatal(err)
	}
	gz := func(data []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name   string
		mutate func(cm *corev1.ConfigMap)
	}{
		{"no key", func(cm *corev1.ConfigMap) { cm.BinaryData = nil }},
		{"not gzip", func(cm *corev1.ConfigMap) { cm.BinaryData[Key] = []byte("plain") }},
		{"digest mismatch", func(cm *corev1.ConfigMap) { cm.Annotations[AnnotationDigest] = "sha256:00" }},
		{"not a tar", func(cm *corev1.ConfigMap) {
			cm.BinaryData[Key] = gz([]byte(strings.Repeat("garbage", 200)))
			delete(cm.Annotations, AnnotationDigest)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := good.DeepCopy()
			tt.mutate(cm)
			b, problems := Decode(cm)
			if b != nil || len(problems) != 1 || problems[0].Rule != bundle.RuleConfigMap || problems[0].Path != "configmap/ns/ops-etcdoperator.v0.9.2" {
				t.Fatalf("want one %s problem, got %v", bundle.RuleConfigMap, problems)
			}
		})
	}
	// A bad ConfigMap next to a good one: the good one still loads.
	bad := good.DeepCopy()
	bad.Name = "ops-broken"
	bad.BinaryData = nil
	c := Load([]corev1.ConfigMap{*bad, *good})
	if len(c.Bundles) != 1 || !bundle.HasErrors(c.Problems) || c.Problems[0].Path != "configmap/ns/ops-broken" {
		t.Fatalf("got %d bundles, problems %v", len(c.Bundles), c.Problems)
	}
}

func TestConfigMapName(t *testing.T) {
	if got := Name("Ops", "etcd.v1"); got != "ops-etcd.v1" {
		t.Errorf("got %s", got)
	}
	long := Name("c", strings.Repeat("x", 300))
	if len(long) != 253 || long == Name("c", strings.Repeat("x", 299)+"y") {
		t.Errorf("long names must be shortened uniquely: %d", len(long))
	}
}

// TestDeprecationsConfigMap: a ConfigMap of the catalog with data deprecations.yaml brings its olm.deprecations; the
// resolver then prefers the version it does not deprecate.
func TestDeprecationsConfigMap(t *testing.T) {
	var cms []corev1.ConfigMap
	for _, v := range []string{"1.0.0", "1.1.0"} {
		dir := "../../bundles/konnect-operator/" + v
		b, problems := bundle.Load(dir)
		if b == nil {
			t.Fatal(problems)
		}
		cm, err := Encode(b, dir, "ops", "olm")
		if err != nil {
			t.Fatal(err)
		}
		cms = append(cms, *cm)
	}
	cms = append(cms, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: "ops-deprecations"},
		Data: map[string]string{DeprecationsKey: "schema: olm.deprecations\npackage: konnect-operator\nentries:\n" +
			"- reference: {schema: olm.bundle, name: konnect-operator.v1.1.0}\n  message: withdrawn\n"}})
	c := Load(cms)
	if len(c.Bundles) != 2 || len(c.Deprecations) != 1 || len(c.Problems) > 0 {
		t.Fatalf("Load: %d bundles, deprecations %+v, problems %v", len(c.Bundles), c.Deprecations, c.Problems)
	}
	res, err := index.New(index.Catalog{Name: "olm/ops", Contents: c}).Resolve(index.Request{Package: "konnect-operator"})
	if err != nil || res.Chosen == nil || res.Chosen.Name != "konnect-operator.v1.0.0" {
		t.Fatalf("resolved %v:\n%s", err, res.Explain())
	}
}
