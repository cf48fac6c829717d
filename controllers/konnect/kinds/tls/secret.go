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
// to m. Nothing of a Secret's values appears in a message.
func (m *material) readSecret(ctx context.Context, c client.Reader, namespace string, ref *configurationv1alpha1.SecretNamespacedRef, keys, names []string) (entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionSecretRefValid}
	if ref.Namespace != nil && *ref.Namespace != "" && *ref.Namespace != namespace {
		check.Message = fmt.Sprintf("Secret %s/%s is in another namespace: only this object's namespace is supported", *ref.Namespace, ref.Name)
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
	m.secrets = append(m.secrets, ref.Name+"@"+s.ResourceVersion)
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

// readingSecret finds the objects of a list whose secretRefs name the Secret s (names returns them).
func readingSecret(list client.ObjectList, items func(client.ObjectList) []client.Object, names func(client.Object) []string) func(context.Context, client.Reader, client.Object) []types.NamespacedName {
	return func(ctx context.Context, c client.Reader, s client.Object) []types.NamespacedName {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, client.InNamespace(s.GetNamespace())); err != nil {
			return nil
		}
		var keys []types.NamespacedName
		for _, o := range items(l) {
			for _, n := range names(o) {
				if n == s.GetName() {
					keys = append(keys, client.ObjectKeyFromObject(o))
					break
				}
			}
		}
		return keys
	}
}
