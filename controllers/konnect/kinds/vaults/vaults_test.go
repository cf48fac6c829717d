package vaults

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/entity"
)

func vault(name, cpNamespace, cp string) *configurationv1alpha1.KongVault {
	return &configurationv1alpha1.KongVault{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configurationv1alpha1.KongVaultSpec{
		Backend: "env", Prefix: name, Config: apiextensionsv1.JSON{Raw: []byte(`{"prefix":"app_"}`)},
		ControlPlaneRef: &configurationv1alpha1.ClusterControlPlaneRef{Type: configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
			KonnectNamespacedRef: &configurationv1alpha1.ClusterKonnectNamespacedRef{Name: cp, Namespace: cpNamespace}},
	}}
}

// A cluster-scoped vault must name its control plane's namespace; a control plane's change reaches the vaults
// naming it (and only those); the body names the vault by its backend.
func TestVault(t *testing.T) {
	s := runtime.NewScheme()
	if err := configurationv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(vault("a", "ns", "cp"), vault("b", "other", "cp"), vault("c", "ns", "cp2")).Build()
	_, checks, err := resolveVault(context.Background(), c, vault("x", "", "cp"))
	if err != nil || len(checks) != 1 || checks[0].OK || !strings.Contains(checks[0].Message, "namespace") {
		t.Errorf("vault without the control plane's namespace: %+v %v", checks, err)
	}
	cp := &konnectv1alpha2.KonnectGatewayControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"}}
	if got := vaultsIn(context.Background(), c, cp); len(got) != 1 || got[0] != (types.NamespacedName{Name: "a"}) {
		t.Errorf("vaults of ns/cp: %v, want [a]", got)
	}
	body, err := vaultBody(vault("a", "ns", "cp"), entity.Refs{})
	if err != nil || body["name"] != "env" || body["prefix"] != "a" || body["config"].(map[string]any)["prefix"] != "app_" {
		t.Errorf("body %v %v", body, err)
	}
}
