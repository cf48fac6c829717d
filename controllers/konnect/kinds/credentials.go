package kinds

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/bodydiff"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// A KongConsumer's credentials, declared as Kong Ingress Controller declares them: spec-level `credentials` names
// Secrets labelled konghq.com/credential=<type> (or, in the older form, with a kongCredType key) whose data holds
// the credential's fields. Each becomes a credential of the consumer in Konnect, tagged with the consumer's
// identity and the Secret's name, so it is found again, updated when the Secret changes, and deleted when the
// consumer no longer names the Secret.

const (
	// CredentialLabel is the Secret label that gives a credential's type.
	CredentialLabel = "konghq.com/credential"
	// legacyCredentialTypeKey is the Secret data key that gave the type before the label existed.
	legacyCredentialTypeKey = "kongCredType"
	// TagSecret is the tag key naming the Secret a credential comes from.
	TagSecret = "k8s-secret"
)

// consumerParts are a consumer's declared credentials and consumer groups.
type consumerParts struct {
	// Owner is the consumer's uid tag, which every credential it owns in Konnect carries.
	Owner       string       `json:"owner"`
	Credentials []credential `json:"credentials"`
	// Groups are the Konnect IDs of the consumer groups it is in (omitted when none, so the hash of a consumer
	// without groups is what it was before groups were synced).
	Groups []string `json:"groups,omitempty"`
}

// credentialFields are the Secret data keys of each type: required ones first, then optional ones.
var credentialFields = map[konnectapi.CredentialType]struct{ required, optional []string }{
	konnectapi.CredentialBasicAuth: {required: []string{"username", "password"}},
	konnectapi.CredentialKeyAuth:   {required: []string{"key"}},
	konnectapi.CredentialACL:       {required: []string{"group"}},
	konnectapi.CredentialJWT:       {required: []string{"key"}, optional: []string{"algorithm", "rsa_public_key", "secret"}},
	konnectapi.CredentialHMACAuth:  {required: []string{"username"}, optional: []string{"secret"}},
}

// credential is one declared credential. Only the Secret's name and resourceVersion are hashed (exported
// fields); the values stay out of the object's status.
type credential struct {
	Type    konnectapi.CredentialType `json:"type"`
	Secret  string                    `json:"secret"`
	Version string                    `json:"version"`
	body    map[string]any
}

// credentialAliases are other names of a credential type: Kong's Konnect reconciler labels HMAC credential
// Secrets konghq.com/credential=hmac where Kong Ingress Controller says hmac-auth; both are accepted.
var credentialAliases = map[string]konnectapi.CredentialType{"hmac": konnectapi.CredentialHMACAuth}

// credentialType reads a Secret's credential type.
func credentialType(s *corev1.Secret) string {
	t := s.Labels[CredentialLabel]
	if t == "" {
		t = string(s.Data[legacyCredentialTypeKey])
	}
	if alias, ok := credentialAliases[t]; ok {
		return string(alias)
	}
	return t
}

// credentialBody turns a Secret into the credential's Konnect body, or says what is wrong with it (a message for the
// user, naming the Secret).
func credentialBody(s *corev1.Secret) (konnectapi.CredentialType, map[string]any, string) {
	raw := credentialType(s)
	t := konnectapi.CredentialType(raw)
	fields, ok := credentialFields[t]
	if !ok {
		if raw == "" {
			return "", nil, fmt.Sprintf("Secret %s/%s has no label %s naming the credential type (one of %s)", s.Namespace, s.Name, CredentialLabel, typeList())
		}
		return "", nil, fmt.Sprintf("Secret %s/%s: credential type %q is not supported (use one of %s)", s.Namespace, s.Name, raw, typeList())
	}
	body := map[string]any{}
	for _, k := range fields.required {
		v := string(s.Data[k])
		if v == "" {
			return "", nil, fmt.Sprintf("Secret %s/%s: a %s credential needs data key %q", s.Namespace, s.Name, t, k)
		}
		body[k] = v
	}
	for _, k := range fields.optional {
		if v := string(s.Data[k]); v != "" {
			body[k] = v
		}
	}
	return t, body, ""
}

func typeList() string {
	names := make([]string, len(konnectapi.CredentialTypes))
	for i, t := range konnectapi.CredentialTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

func secretTag(name string) string { return TagSecret + ":" + name }

// DeclaredParts of a consumer are its credentials and its consumer group memberships.
func (k consumerMapping) DeclaredParts(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer) (consumerParts, bool, []entity.RefCheck, error) {
	groups, groupCheck, err := k.declaredGroups(ctx, c, kc)
	if err != nil {
		return consumerParts{}, false, nil, err
	}
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionCredentialsValid, Absent: len(kc.Credentials) == 0}
	// A condition stays until what an earlier declaration made is deleted, so a consumer that never had credentials
	// or groups costs no call.
	if check.Absent && groupCheck.Absent && apimeta.FindStatusCondition(kc.Status.Conditions, check.Type) == nil &&
		apimeta.FindStatusCondition(kc.Status.Conditions, groupCheck.Type) == nil {
		return consumerParts{}, false, []entity.RefCheck{groupCheck, check}, nil
	}
	creds, problems, err := k.declaredCredentials(ctx, c, kc)
	if err != nil {
		return consumerParts{}, false, nil, err
	}
	if len(problems) > 0 {
		check.Message = "credentials cannot be synced: " + strings.Join(problems, "; ")
	} else {
		check.OK, check.Message = true, fmt.Sprintf("credential Secrets usable: %s", strings.Join(kc.Credentials, ", "))
	}
	return consumerParts{Owner: entity.UIDTag(kc), Credentials: creds, Groups: groups}, true, []entity.RefCheck{groupCheck, check}, nil
}

// declaredCredentials reads the credential Secrets the consumer names; problems say what is wrong with them.
func (k consumerMapping) declaredCredentials(ctx context.Context, c client.Reader, kc *configurationv1.KongConsumer) ([]credential, []string, error) {
	creds := []credential{}
	var problems []string
	for _, name := range slices.Compact(slices.Sorted(slices.Values(kc.Credentials))) {
		s := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				problems = append(problems, fmt.Sprintf("Secret %s/%s not found", kc.Namespace, name))
				continue
			}
			return nil, nil, err
		}
		t, body, problem := credentialBody(s)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		body["tags"] = kindbase.StringsToAny(append(entity.IdentityTags(k.Name(), kc, nil), secretTag(name)))
		creds = append(creds, credential{Type: t, Secret: name, Version: s.ResourceVersion, body: body})
	}
	return creds, problems, nil
}

// SyncParts makes the consumer's credentials in Konnect the declared ones, and when the declaration changed its
// consumer group memberships too. It lists the credentials of each type
// in use (every type when the declaration changed, to remove those no longer named), creates the missing ones,
// updates the ones that differ (all of them when the declaration changed: Konnect hashes passwords, so their
// change cannot be seen) and deletes the ones this operator made that are no longer declared. Credentials made by
// someone else (without the consumer's tag) are left alone.
func (k consumerMapping) SyncParts(ctx context.Context, api konnectapi.API, refs entity.Refs, consumerID string, p consumerParts, changed bool) error {
	if err := k.syncAllCredentials(ctx, api, refs, consumerID, p, changed); err != nil {
		return err
	}
	if !changed {
		// Memberships changed in Konnect are restored by their group's periodic check (one call per group).
		return nil
	}
	return syncConsumerGroups(ctx, api, refs.ControlPlaneID, consumerID, p.Groups)
}

// Periodic: a consumer's periodic check reads its credentials only; its memberships are checked by its groups.
func (consumerMapping) Periodic(p consumerParts) bool { return len(p.Credentials) > 0 }

// syncAllCredentials brings each credential type in use (every type when the declaration changed) to the declared
// credentials.
func (k consumerMapping) syncAllCredentials(ctx context.Context, api konnectapi.API, refs entity.Refs, consumerID string, p consumerParts, changed bool) error {
	types := konnectapi.CredentialTypes
	if !changed {
		types = nil
		for _, c := range p.Credentials {
			if !slices.Contains(types, c.Type) {
				types = append(types, c.Type)
			}
		}
	}
	for _, t := range types {
		if err := k.syncCredentials(ctx, api, refs.ControlPlaneID, consumerID, t, p, changed); err != nil {
			return err
		}
	}
	return nil
}

func (consumerMapping) syncCredentials(ctx context.Context, api konnectapi.API, cpID, consumerID string, t konnectapi.CredentialType, p consumerParts, changed bool) error {
	// The owner tag filter lists only this consumer's credentials made by this operator.
	existing, err := api.Credentials(ctx, t, cpID, consumerID, p.Owner)
	if err != nil {
		return err
	}
	bySecret := map[string][]konnectapi.Entity{}
	for _, e := range existing {
		name := entity.TagValue(e.Body["tags"], TagSecret)
		bySecret[name] = append(bySecret[name], e)
	}
	for _, c := range p.Credentials {
		if c.Type != t {
			continue
		}
		found := bySecret[c.Secret]
		delete(bySecret, c.Secret)
		if len(found) == 0 {
			if _, err := api.CreateCredential(ctx, t, cpID, consumerID, c.body); err != nil {
				return err
			}
			continue
		}
		// Extras (e.g. left by a create whose answer was lost) go; the first one is kept.
		for _, extra := range found[1:] {
			if err := api.DeleteCredential(ctx, t, cpID, consumerID, extra.ID); err != nil && !konnectapi.IsNotFound(err) {
				return err
			}
		}
		if changed || bodydiff.Drifted(c.body, found[0].Body, comparableKeys(c.body)) {
			// What Konnect generated (a JWT Secret without a secret) is kept, as listed.
			body := konnectapi.KeepGenerated(t, c.body, found[0].Body)
			if err := api.UpdateCredential(ctx, t, cpID, consumerID, found[0].ID, body); err != nil {
				return err
			}
		}
	}
	// What is left is no longer declared.
	for _, stale := range bySecret {
		for _, e := range stale {
			if err := api.DeleteCredential(ctx, t, cpID, consumerID, e.ID); err != nil && !konnectapi.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// comparableKeys are the body keys Konnect shows back as sent: not a basic-auth password, which it stores hashed.
func comparableKeys(body map[string]any) []string {
	keys := make([]string, 0, len(body))
	for key := range body {
		if key != "password" {
			keys = append(keys, key)
		}
	}
	return keys
}

func credentialsIndex() entity.RefIndex {
	return entity.RefIndex{
		Field:  indexCredentials,
		Target: &corev1.Secret{},
		Extract: func(o client.Object) []string {
			return o.(*configurationv1.KongConsumer).Credentials
		},
	}
}
