package grants

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

func TestAllows(t *testing.T) {
	name := "shared"
	grant := func(fromNS string, toName *string) *configurationv1alpha1.KongReferenceGrant {
		return &configurationv1alpha1.KongReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "kong", Name: "g"}, Spec: configurationv1alpha1.KongReferenceGrantSpec{
			From: []configurationv1alpha1.ReferenceGrantFrom{{Group: "configuration.konghq.com", Kind: "KongService", Namespace: fromNS}},
			To:   []configurationv1alpha1.ReferenceGrantTo{{Group: "konnect.konghq.com", Kind: "KonnectGatewayControlPlane", Name: toName}},
		}}
	}
	from := From{Group: "configuration.konghq.com", Kind: "KongService", Namespace: "team-a"}
	to := To{Group: "konnect.konghq.com", Kind: "KonnectGatewayControlPlane", Namespace: "kong", Name: "shared"}
	other := "other"
	for _, tc := range []struct {
		name  string
		grant *configurationv1alpha1.KongReferenceGrant
		from  From
		to    To
		want  bool
	}{
		{"any control plane of the namespace", grant("team-a", nil), from, to, true},
		{"the named control plane", grant("team-a", &name), from, to, true},
		{"another named control plane", grant("team-a", &other), from, to, false},
		{"another referrer namespace", grant("team-b", nil), from, to, false},
		{"another referrer kind", grant("team-a", nil), From{Group: from.Group, Kind: "KongRoute", Namespace: "team-a"}, to, false},
		{"a grant outside the target's namespace", grant("team-a", nil), from, To{Group: to.Group, Kind: to.Kind, Namespace: "elsewhere", Name: "shared"}, false},
		{"a cluster-scoped referrer needs namespace \"\"", grant("", nil), From{Group: from.Group, Kind: "KongService"}, to, true},
		{"a cluster-scoped referrer is not any namespace's", grant("team-a", nil), From{Group: from.Group, Kind: "KongService"}, to, false},
	} {
		if got := Allows(tc.grant, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: Allows = %v, want %v", tc.name, got, tc.want)
		}
	}
}
