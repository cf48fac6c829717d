package registry

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

// TestRequestSourceNamespace: an AppType resolves from a CatalogSource in its own namespace or ALM's, never from
// another tenant's, even when it names one.
func TestRequestSourceNamespace(t *testing.T) {
	r := New()
	for _, key := range []types.NamespacedName{{Namespace: "team-a", Name: "ops"}, {Namespace: "team-b", Name: "ops"}, {Namespace: "alm-system", Name: "main"}} {
		r.Set(key, 0, &fbc.Contents{}, key.String())
	}
	at := func(source, sourceNamespace string) *operatorsv1alpha1.AppType {
		return &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p"},
			Spec: operatorsv1alpha1.AppTypeSpec{Package: "p", Source: source, SourceNamespace: sourceNamespace}}
	}
	for _, tc := range []struct {
		at       *operatorsv1alpha1.AppType
		catalogs string // joined with ","; "" when refused
	}{
		{at("", ""), "alm-system/main,team-a/ops"},
		{at("ops", ""), "team-a/ops"},
		{at("ops", "team-a"), "team-a/ops"},
		{at("main", "alm-system"), "alm-system/main"},
		{at("ops", "team-b"), ""},
	} {
		req, err := r.Request(tc.at, "alm-system")
		if tc.catalogs == "" {
			if !errors.Is(err, index.ErrInvalidRequest) || !strings.Contains(err.Error(), "spec.sourceNamespace team-b") {
				t.Errorf("source %s/%s: err %v, want a refusal naming spec.sourceNamespace", tc.at.Spec.SourceNamespace, tc.at.Spec.Source, err)
			}
			continue
		}
		if err != nil || strings.Join(req.Catalogs, ",") != tc.catalogs {
			t.Errorf("source %s/%s: catalogs %v (%v), want %s", tc.at.Spec.SourceNamespace, tc.at.Spec.Source, req.Catalogs, err, tc.catalogs)
		}
	}
}
