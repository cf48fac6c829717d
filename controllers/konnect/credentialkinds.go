package konnect

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/credentials"
	"github.com/almproject/alm/controllers/konnect/retag"
)

// allInstalled says whether every kind of names (group configuration.konghq.com v1alpha1) is served.
func allInstalled(has func(schema.GroupVersionKind) (bool, error), names []string) (bool, error) {
	all := true
	for _, kind := range names {
		ok, err := has(configurationv1alpha1.GroupVersion.WithKind(kind))
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// setupCredentialKinds registers the loops of the credential kinds when their CRDs are installed. Their Konnect
// client serves their entity calls with the consumer credential calls (credentials.Clients).
func setupCredentialKinds(ctx context.Context, mgr manager.Manager, installed installedKinds, opts entity.Options) error {
	if !installed.credentials {
		mgr.GetLogger().WithName("setup").Info("the credential CRDs (KongCredentialAPIKey, ...) are not installed: they are not synced")
		return nil
	}
	opts.Clients = credentials.Clients{ClientFactory: opts.Clients}
	for _, setup := range []func() error{
		func() error { return entity.Setup(ctx, mgr, credentials.APIKey(), opts) },
		func() error { return entity.Setup(ctx, mgr, credentials.BasicAuth(), opts) },
		func() error { return entity.Setup(ctx, mgr, credentials.ACL(), opts) },
		func() error { return entity.Setup(ctx, mgr, credentials.JWT(), opts) },
		func() error { return entity.Setup(ctx, mgr, credentials.HMAC(), opts) },
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	return nil
}

// credentialRetaggers are the re-taggings of the credential kinds.
func credentialRetaggers(mgr manager.Manager, opts Options) []retagger {
	c, rs, clients, scheme := client.Reader(mgr.GetClient()), mgr.GetScheme(), credentials.Clients{ClientFactory: opts.Clients}, opts.TagScheme
	var out []retagger
	add := func(r retag.Retagger, err error) { out = append(out, retagger{r, err}) }
	add(retag.For(c, rs, credentials.APIKey(), clients, scheme))
	add(retag.For(c, rs, credentials.BasicAuth(), clients, scheme))
	add(retag.For(c, rs, credentials.ACL(), clients, scheme))
	add(retag.For(c, rs, credentials.JWT(), clients, scheme))
	add(retag.For(c, rs, credentials.HMAC(), clients, scheme))
	return out
}
