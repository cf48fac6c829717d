package kindbase

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
)

// Certificate references of a KongService or KongUpstream (Kong's operator v2.2: clientCertificateRef and
// caCertificateRefs): each names a KongCertificate or KongCACertificate, in the referrer's namespace or, where a
// KongReferenceGrant there allows it, in another, which must exist in Konnect in the referrer's control plane.

// Index names of the certificate references (values namespace/name: references may cross namespaces).
const (
	IndexClientCertificateRef = "konnect.clientCertificateRef"
	IndexCACertificateRefs    = "konnect.caCertificateRefs"
)

// CertRefs are the certificate references of an object of kind From.Kind in From.Namespace.
type CertRefs struct {
	From   grants.From
	Client *configurationv1alpha1.NamespacedRef
	CAs    []configurationv1alpha1.NamespacedRef
	// WithCAs: the kind has caCertificateRefs (a KongService; a KongUpstream has none).
	WithCAs bool
}

// CertIDs are the Konnect IDs the references resolved to (Refs.Found of a service or upstream).
type CertIDs struct {
	Client string
	CAs    []string
}

// Resolve checks the references (after the control plane, whose Konnect ID is cpID) and returns the IDs and a
// check each for the client certificate and, WithCAs, the CA certificates. An error is a failed read.
func (r CertRefs) Resolve(ctx context.Context, c client.Reader, cpID string) (CertIDs, []entity.RefCheck, error) {
	var ids CertIDs
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionKongCertificateRefValid, Absent: r.Client == nil}
	if r.Client != nil {
		id, msg, err := r.certificate(ctx, c, "KongCertificate", &configurationv1alpha1.KongCertificate{}, *r.Client, cpID)
		if err != nil {
			return ids, nil, err
		}
		check.OK, check.Message, check.Reason = id != "", msg.text, msg.reason
		ids.Client = id
	}
	checks := []entity.RefCheck{check}
	if !r.WithCAs {
		return ids, checks, nil
	}
	caCheck := entity.RefCheck{Type: konnectv1alpha1.ConditionKongCACertificateRefsValid, Absent: len(r.CAs) == 0, OK: true}
	var found []string
	for _, ref := range r.CAs {
		id, msg, err := r.certificate(ctx, c, "KongCACertificate", &configurationv1alpha1.KongCACertificate{}, ref, cpID)
		if err != nil {
			return ids, nil, err
		}
		if id == "" {
			caCheck.OK, caCheck.Message, caCheck.Reason = false, msg.text, msg.reason
			break
		}
		ids.CAs = append(ids.CAs, id)
		found = append(found, r.shown(ref))
	}
	if caCheck.OK && !caCheck.Absent {
		caCheck.Message = "KongCACertificates exist in Konnect in the control plane: " + strings.Join(found, ", ")
	}
	return ids, append(checks, caCheck), nil
}

// certMessage is what a certificate check says, and its reason ("" for the default).
type certMessage struct{ text, reason string }

// certificate reads the KongCertificate or KongCACertificate ref names (obj is an empty one) and returns its
// Konnect ID, "" with a message when it cannot be used.
func (r CertRefs) certificate(ctx context.Context, c client.Reader, kind string, obj client.Object, ref configurationv1alpha1.NamespacedRef, cpID string) (string, certMessage, error) {
	ns := r.namespaceOf(ref)
	to := grants.To{Group: configurationv1alpha1.GroupVersion.Group, Kind: kind, Namespace: ns, Name: ref.Name}
	if denied := grants.Check(ctx, c, r.From, to); denied != "" {
		return "", certMessage{denied, konnectv1alpha1.ReasonRefNotPermitted}, nil
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return "", certMessage{text: fmt.Sprintf("%s %s/%s not found", kind, ns, ref.Name)}, nil
		}
		return "", certMessage{}, err
	}
	var k *configurationv1alpha1.KonnectEntityStatusWithControlPlaneRef
	switch o := obj.(type) {
	case *configurationv1alpha1.KongCertificate:
		k = o.Status.Konnect
	case *configurationv1alpha1.KongCACertificate:
		k = o.Status.Konnect
	}
	if !obj.GetDeletionTimestamp().IsZero() || k == nil || k.ID == "" {
		return "", certMessage{text: fmt.Sprintf("%s %s/%s does not exist in Konnect yet (or is being deleted)", kind, ns, ref.Name)}, nil
	}
	if k.ControlPlaneID != cpID {
		return "", certMessage{text: fmt.Sprintf("%s %s/%s is in control plane %s, not in this object's (%s)", kind, ns, ref.Name, k.ControlPlaneID, cpID)}, nil
	}
	return k.ID, certMessage{text: fmt.Sprintf("%s %s/%s exists in Konnect in the control plane", kind, ns, ref.Name)}, nil
}

func (r CertRefs) namespaceOf(ref configurationv1alpha1.NamespacedRef) string {
	if ref.Namespace != nil && *ref.Namespace != "" {
		return *ref.Namespace
	}
	return r.From.Namespace
}

// shown is a reference as a message names it: the name alone in the referrer's namespace, else namespace/name.
func (r CertRefs) shown(ref configurationv1alpha1.NamespacedRef) string {
	if ns := r.namespaceOf(ref); ns != r.From.Namespace {
		return ns + "/" + ref.Name
	}
	return ref.Name
}

// AddToBody puts the IDs into a service's or upstream's body: client_certificate {id} and ca_certificates.
func (ids CertIDs) AddToBody(body map[string]any) {
	if ids.Client != "" {
		body["client_certificate"] = map[string]any{"id": ids.Client}
	}
	if len(ids.CAs) > 0 {
		body["ca_certificates"] = StringsToAny(ids.CAs)
	}
}

// CertRefIndex is the index named field of a certificate reference to objects of target's kind (refs reads the
// references from an object): referrers are found by the namespace/name of the certificate, in any namespace.
func CertRefIndex(field string, target client.Object, refs func(client.Object) []configurationv1alpha1.NamespacedRef) entity.RefIndex {
	return entity.RefIndex{
		Field:  field,
		Target: target,
		Extract: func(o client.Object) []string {
			var keys []string
			for _, ref := range refs(o) {
				ns := o.GetNamespace()
				if ref.Namespace != nil && *ref.Namespace != "" {
					ns = *ref.Namespace
				}
				keys = append(keys, ns+"/"+ref.Name)
			}
			return keys
		},
		Key: func(t client.Object) string { return t.GetNamespace() + "/" + t.GetName() },
	}
}
