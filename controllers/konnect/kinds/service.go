package kinds

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Service is the Kind of KongService: a service in a Konnect control plane.
func Service() entity.Kind[*configurationv1alpha1.KongService] {
	return entity.Kind[*configurationv1alpha1.KongService]{Mapping: serviceMapping{}}
}

// serviceMapping adapts KongService.
type serviceMapping struct{}

func (serviceMapping) Name() string                { return "KongService" }
func (serviceMapping) Type() konnectapi.EntityType { return konnectapi.TypeService }
func (serviceMapping) New() *configurationv1alpha1.KongService {
	return &configurationv1alpha1.KongService{}
}
func (serviceMapping) NewList() client.ObjectList { return &configurationv1alpha1.KongServiceList{} }
func (serviceMapping) Items(l client.ObjectList) []*configurationv1alpha1.KongService {
	return kindbase.Pointers(l.(*configurationv1alpha1.KongServiceList).Items)
}

func (serviceMapping) Managed(s *configurationv1alpha1.KongService) bool {
	return s.Spec.ControlPlaneRef.ForKonnect()
}

func (serviceMapping) Resolve(ctx context.Context, c client.Reader, s *configurationv1alpha1.KongService) (entity.Refs, []entity.RefCheck, error) {
	return kindbase.ResolveControlPlane(ctx, c, "KongService", s.Namespace, s.Spec.ControlPlaneRef)
}

// Desired is the service; its url, a write-only shorthand that Konnect stores as protocol, host, port and path, is
// sent as those four fields, so they can be compared for drift.
func (k serviceMapping) Desired(s *configurationv1alpha1.KongService, _ entity.Refs) (map[string]any, error) {
	body, err := kindbase.BodyOf(s.Spec.KongServiceAPISpec)
	if err != nil {
		return nil, err
	}
	if s.Spec.URL != nil {
		if err := expandURL(body, *s.Spec.URL); err != nil {
			return nil, fmt.Errorf("KongService %s/%s: spec.url: %w", s.Namespace, s.Name, err)
		}
	}
	body["tags"] = kindbase.StringsToAny(entity.IdentityTags(k.Name(), s, s.Spec.Tags))
	return body, nil
}

// expandURL replaces body's url with the protocol, host, port and path it stands for, as Kong does.
func expandURL(body map[string]any, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "" || u.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute URL such as https://example.com:8443/api", raw)
	}
	port := map[string]int64{"http": 80, "ws": 80, "grpc": 80, "https": 443, "wss": 443, "grpcs": 443}[u.Scheme]
	if p := u.Port(); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%q has an invalid port", raw)
		}
		port = n
	}
	delete(body, "url")
	body["protocol"], body["host"], body["port"] = u.Scheme, u.Hostname(), port
	if u.Path != "" {
		body["path"] = u.Path
	}
	return nil
}

// DriftKeys: every field but url, which Desired expands.
func (serviceMapping) DriftKeys() []string {
	return []string{"connect_timeout", "enabled", "host", "name", "path", "port", "protocol", "read_timeout",
		"retries", "tags", "tls_verify", "tls_verify_depth", "write_timeout"}
}

func (serviceMapping) Conditions(s *configurationv1alpha1.KongService) *[]metav1.Condition {
	return &s.Status.Conditions
}

func (serviceMapping) State(s *configurationv1alpha1.KongService) entity.State {
	return kindbase.StateInControlPlane(s.Status.Konnect, s.Status.SyncStatus)
}

func (serviceMapping) SetState(s *configurationv1alpha1.KongService, st entity.State) {
	s.Status.Konnect = kindbase.StatusInControlPlane(st)
	s.Status.SyncStatus = st.Sync
}

func (k serviceMapping) DeletionScope(ctx context.Context, c client.Reader, s *configurationv1alpha1.KongService, st entity.State) (*konnectv1alpha1.KonnectAPIAuthConfiguration, string, error) {
	return kindbase.DeletionScopeInControlPlane(ctx, c, s, st, k.Resolve)
}

func (serviceMapping) Indexes() []entity.RefIndex {
	return []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1alpha1.KongService).Spec.ControlPlaneRef
	})}
}
