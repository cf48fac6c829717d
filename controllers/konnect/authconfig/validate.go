package authconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// maxTokenBytes bounds a token read from a Secret, as the CRD bounds spec.token.
const maxTokenBytes = 1024

// Rules an auth configuration breaks when it cannot be used as written. The CRD refuses most of them at admission;
// the loop checks them again for what it reads at run time (the token Secret) and for objects stored before the CRD
// had the rule. Nothing is sent to Konnect for an auth configuration that breaks one.
const (
	RuleServerURL       = "server-url"
	RuleTokenCharacters = "token-characters"
	RuleSecretNamespace = "secret-namespace"
	RuleSecretMissing   = "secret-missing"
	RuleSecretKey       = "secret-key"
)

// invalid says why auth cannot be used as written: the condition reason and a message naming the field and the
// rule (never the token); an empty reason when it can. err is a failure to read the Secret.
func (r *Reconciler) invalid(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (reason, msg string, err error) {
	if _, err := konnectapi.NormalizeServerURL(auth.Spec.ServerURL); err != nil {
		return konnectv1alpha1.ReasonInvalidSpec, fmt.Sprintf("spec.serverURL: %v (rule %s: [http[s]://]host[:port][/path])", err, RuleServerURL), nil
	}
	switch {
	case auth.Spec.Type == konnectv1alpha1.KonnectAPIAuthTypeToken && auth.Spec.Token != "":
		if p := tokenProblem(auth.Spec.Token); p != "" {
			return konnectv1alpha1.ReasonInvalidSpec, fmt.Sprintf("spec.token %s (rule %s)", p, RuleTokenCharacters), nil
		}
	case auth.Spec.Type == konnectv1alpha1.KonnectAPIAuthTypeSecretRef && auth.Spec.SecretRef != nil && auth.Spec.SecretRef.Name != "":
		return r.invalidSecret(ctx, auth)
	}
	return "", "", nil
}

// invalidSecret checks the token Secret: in the auth configuration's namespace, present, with a usable token.
func (r *Reconciler) invalidSecret(ctx context.Context, auth *konnectv1alpha1.KonnectAPIAuthConfiguration) (reason, msg string, err error) {
	ref := auth.Spec.SecretRef
	if ref.Namespace != "" && ref.Namespace != auth.Namespace {
		return konnectv1alpha1.ReasonInvalidSpec, fmt.Sprintf(
			"spec.secretRef.namespace %q is not this object's namespace %q (rule %s: a KonnectAPIAuthConfiguration reads its token only from a Secret in its own namespace)",
			ref.Namespace, auth.Namespace, RuleSecretNamespace), nil
	}
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: auth.Namespace, Name: ref.Name}
	if err := r.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return konnectv1alpha1.ReasonInvalidReference, fmt.Sprintf("spec.secretRef: Secret %s not found (rule %s); the auth configuration is checked again when it appears", key, RuleSecretMissing), nil
		}
		return "", "", fmt.Errorf("reading Secret %s: %w", key, err)
	}
	token, ok := secret.Data[konnectv1alpha1.SecretTokenKey]
	if !ok || len(token) == 0 {
		return konnectv1alpha1.ReasonInvalidSpec, fmt.Sprintf("spec.secretRef: Secret %s has no key %q (rule %s: the Secret holds the token under the key %q)",
			key, konnectv1alpha1.SecretTokenKey, RuleSecretKey, konnectv1alpha1.SecretTokenKey), nil
	}
	if p := tokenProblem(string(token)); p != "" {
		return konnectv1alpha1.ReasonInvalidSpec, fmt.Sprintf("spec.secretRef: the token in Secret %s (key %q) %s (rule %s)", key, konnectv1alpha1.SecretTokenKey, p, RuleTokenCharacters), nil
	}
	return "", "", nil
}

// tokenProblem says what makes t unusable in an HTTP header, without quoting it; empty when nothing does.
func tokenProblem(t string) string {
	if len(t) > maxTokenBytes {
		return fmt.Sprintf("is %d bytes, more than %d", len(t), maxTokenBytes)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < '!' || c > '~' {
			return fmt.Sprintf("has a %s at byte %d: a token is printable ASCII without spaces (it is sent in an HTTP header)", byteClass(c), i)
		}
	}
	return ""
}

func byteClass(c byte) string {
	switch {
	case c == '\r' || c == '\n':
		return "line break"
	case c == ' ':
		return "space"
	case c > '~' && c != 0x7f:
		return "non-ASCII byte"
	default:
		return "control character"
	}
}
