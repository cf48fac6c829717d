package tls

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
)

// Keys of the PEM data in a Secret, as Kong's operator reads them.
const (
	secretKeyCert   = "tls.crt"
	secretKeyKey    = "tls.key"
	secretKeyCACert = "ca.crt"
)

// material is PEM data read from Secrets (Refs.Found): the body fields they fill, and the Secrets' names and
// resourceVersions, hashed in place of the PEM so that no hash of a private key is written to the status.
type material struct {
	fields  map[string]any
	secrets []string
}

// readSecret reads the keys of the Secret ref names into fields (keys[i] into fields[names[i]]) and adds the Secret
// to m. A Secret in another namespace than from's is read only where a KongReferenceGrant there allows from's kind
// to Secrets (Kong's operator's rule). Nothing of a Secret's values appears in a message.
func (m *material) readSecret(ctx context.Context, c client.Reader, from grants.From, ref *configurationv1alpha1.SecretNamespacedRef, keys, names []string) (entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionSecretRefValid}
	namespace := secretNamespace(from.Namespace, ref)
	if denied := grants.Check(ctx, c, from, grants.To{Group: grants.CoreGroup, Kind: "Secret", Namespace: namespace, Name: ref.Name}); denied != "" {
		check.Reason, check.Message = konnectv1alpha1.ReasonRefNotPermitted, denied
		return check, nil
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("Secret %s/%s not found", namespace, ref.Name)
			return check, nil
		}
		return check, err
	}
	for i, k := range keys {
		v, ok := s.Data[k]
		if !ok || len(v) == 0 {
			check.Message = fmt.Sprintf("Secret %s/%s has no key %q", namespace, ref.Name, k)
			return check, nil
		}
		m.fields[names[i]] = string(v)
	}
	named := ref.Name // as before Secrets of other namespaces could be read, so that hashes do not change
	if namespace != from.Namespace {
		named = namespace + "/" + ref.Name
	}
	m.secrets = append(m.secrets, named+"@"+s.ResourceVersion)
	check.OK, check.Message = true, fmt.Sprintf("Secret %s/%s is usable", namespace, ref.Name)
	return check, nil
}

// hashed is the body hashed for an object whose PEM data was read from Secrets: those fields replaced by the
// Secrets' names and versions.
func hashed(refs entity.Refs, desired map[string]any) map[string]any {
	m, ok := refs.Found.(*material)
	if !ok || len(m.secrets) == 0 {
		return desired
	}
	out := make(map[string]any, len(desired))
	for k, v := range desired {
		if _, fromSecret := m.fields[k]; !fromSecret {
			out[k] = v
		}
	}
	out["fromSecrets"] = m.secrets
	return out
}

// secretNamespace is the namespace of the Secret ref of an object in namespace names.
func secretNamespace(namespace string, ref *configurationv1alpha1.SecretNamespacedRef) string {
	if ref.Namespace != nil && *ref.Namespace != "" {
		return *ref.Namespace
	}
	return namespace
}

// readingSecret finds the objects of a list whose secretRefs name the Secret s (refs returns them), in any
// namespace (a KongReferenceGrant may let them read Secrets of another).
func readingSecret(list client.ObjectList, items func(client.ObjectList) []client.Object, refs func(client.Object) []*configurationv1alpha1.SecretNamespacedRef) func(context.Context, client.Reader, client.Object) []types.NamespacedName {
	return func(ctx context.Context, c client.Reader, s client.Object) []types.NamespacedName {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l); err != nil {
			return nil
		}
		var keys []types.NamespacedName
		for _, o := range items(l) {
			for _, ref := range refs(o) {
				if ref != nil && ref.Name == s.GetName() && secretNamespace(o.GetNamespace(), ref) == s.GetNamespace() {
					keys = append(keys, client.ObjectKeyFromObject(o))
					break
				}
			}
		}
		return keys
	}
}
