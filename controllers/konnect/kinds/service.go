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
	"github.com/almproject/alm/controllers/konnect/grants"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Service is the Kind of KongService: a service in a Konnect control plane. With certificates (the KongCertificate
// and KongCACertificate CRDs are installed) its clientCertificateRef and caCertificateRefs are synced; without, a
// service that has them reports them as unsupported.
func Service(certificates bool) entity.Kind[*configurationv1alpha1.KongService] {
	return entity.Kind[*configurationv1alpha1.KongService]{Mapping: serviceMapping{certificates: certificates}}
}

// serviceMapping adapts KongService; certificates says whether certificate references are resolved.
type serviceMapping struct {
	certificates bool
}

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

// Resolve checks the control plane, then the certificate references.
func (k serviceMapping) Resolve(ctx context.Context, c client.Reader, s *configurationv1alpha1.KongService) (entity.Refs, []entity.RefCheck, error) {
	refs, checks, err := kindbase.ResolveControlPlane(ctx, c, "KongService", s.Namespace, s.Spec.ControlPlaneRef)
	hasRefs := s.Spec.ClientCertificateRef != nil || len(s.Spec.CACertificateRefs) > 0
	if err != nil || refs.Auth == nil || !hasRefs && !k.certificates {
		return refs, checks, err
	}
	if !k.certificates {
		return entity.Refs{}, append(checks, entity.RefCheck{Type: konnectv1alpha1.ConditionKongCertificateRefValid, Reason: konnectv1alpha1.ReasonUnsupported,
			Message: "clientCertificateRef and caCertificateRefs need the KongCertificate and KongCACertificate CRDs, which are not installed"}), nil
	}
	certs := kindbase.CertRefs{From: grants.From{Group: configurationv1alpha1.GroupVersion.Group, Kind: "KongService", Namespace: s.Namespace},
		Client: s.Spec.ClientCertificateRef, CAs: s.Spec.CACertificateRefs, WithCAs: true}
	ids, certChecks, err := certs.Resolve(ctx, c, refs.ControlPlaneID)
	if err != nil {
		return entity.Refs{}, nil, err
	}
	refs.Found = ids
	return refs, append(checks, certChecks...), nil
}

// Desired is the service; its url, a write-only shorthand that Konnect stores as protocol, host, port and path, is
// sent as those four fields, so they can be compared for drift.
func (k serviceMapping) Desired(s *configurationv1alpha1.KongService, refs entity.Refs) (map[string]any, error) {
	body, err := kindbase.BodyOf(s.Spec.KongServiceAPISpec)
	if err != nil {
		return nil, err
	}
	if s.Spec.URL != nil {
		if err := expandURL(body, *s.Spec.URL); err != nil {
			return nil, fmt.Errorf("KongService %s/%s: spec.url: %w", s.Namespace, s.Name, err)
		}
	}
	if ids, ok := refs.Found.(kindbase.CertIDs); ok {
		ids.AddToBody(body)
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
		"retries", "tags", "tls_verify", "tls_verify_depth", "write_timeout", "client_certificate", "ca_certificates"}
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

func (k serviceMapping) Indexes() []entity.RefIndex {
	indexes := []entity.RefIndex{kindbase.CPRefIndex(func(o client.Object) *configurationv1alpha1.ControlPlaneRef {
		return o.(*configurationv1alpha1.KongService).Spec.ControlPlaneRef
	})}
	if !k.certificates {
		return indexes
	}
	return append(indexes,
		kindbase.CertRefIndex(kindbase.IndexClientCertificateRef, &configurationv1alpha1.KongCertificate{}, func(o client.Object) []configurationv1alpha1.NamespacedRef {
			if ref := o.(*configurationv1alpha1.KongService).Spec.ClientCertificateRef; ref != nil {
				return []configurationv1alpha1.NamespacedRef{*ref}
			}
			return nil
		}),
		kindbase.CertRefIndex(kindbase.IndexCACertificateRefs, &configurationv1alpha1.KongCACertificate{}, func(o client.Object) []configurationv1alpha1.NamespacedRef {
			return o.(*configurationv1alpha1.KongService).Spec.CACertificateRefs
		}))
}
