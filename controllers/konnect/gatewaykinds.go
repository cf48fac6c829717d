package konnect

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/keys"
	"github.com/almproject/alm/controllers/konnect/kinds/tls"
	"github.com/almproject/alm/controllers/konnect/kinds/upstreams"
	"github.com/almproject/alm/controllers/konnect/kinds/vaults"
	"github.com/almproject/alm/controllers/konnect/retag"
)

// gatewayKindNames are the kinds of upstreams, TLS material, keys and vaults, first shipped together (bundle 1.5.0).
var gatewayKindNames = []string{"KongUpstream", "KongTarget", "KongCertificate", "KongCACertificate", "KongSNI",
	"KongDataPlaneClientCertificate", "KongKey", "KongKeySet", "KongVault"}

// setupGatewayKinds registers the loops of the kinds of upstreams, TLS material, keys and vaults when their CRDs are
// installed.
func setupGatewayKinds(ctx context.Context, mgr manager.Manager, installed installedKinds, opts entity.Options) error {
	if !installed.gateway {
		mgr.GetLogger().WithName("setup").Info("the CRDs of upstreams, certificates, keys and vaults are not installed: they are not synced")
		return nil
	}
	for _, setup := range []func() error{
		func() error { return entity.Setup(ctx, mgr, upstreams.Upstream(), opts) },
		func() error { return entity.Setup(ctx, mgr, upstreams.Target(), opts) },
		func() error { return entity.Setup(ctx, mgr, tls.Certificate(), opts) },
		func() error { return entity.Setup(ctx, mgr, tls.CACertificate(), opts) },
		func() error { return entity.Setup(ctx, mgr, tls.SNI(), opts) },
		func() error { return entity.Setup(ctx, mgr, tls.DataPlaneCertificate(), opts) },
		func() error { return entity.Setup(ctx, mgr, keys.KeySet(), opts) },
		func() error { return entity.Setup(ctx, mgr, keys.Key(), opts) },
		func() error { return entity.Setup(ctx, mgr, vaults.Vault(), opts) },
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	return nil
}

// retagger is a kind's Retagger, or the error of making it.
type retagger struct {
	r   retag.Retagger
	err error
}

// gatewayRetaggers are the re-taggings of the kinds of upstreams, TLS material, keys and vaults, parents first. Data
// plane client certificates carry no tags in Konnect: there is nothing to re-tag.
func gatewayRetaggers(mgr manager.Manager, opts Options) []retagger {
	c, rs, clients, scheme := client.Reader(mgr.GetClient()), mgr.GetScheme(), opts.Clients, opts.TagScheme
	var out []retagger
	add := func(r retag.Retagger, err error) { out = append(out, retagger{r, err}) }
	add(retag.For(c, rs, upstreams.Upstream(), clients, scheme))
	add(retag.For(c, rs, upstreams.Target(), clients, scheme))
	add(retag.For(c, rs, tls.Certificate(), clients, scheme))
	add(retag.For(c, rs, tls.CACertificate(), clients, scheme))
	add(retag.For(c, rs, tls.SNI(), clients, scheme))
	add(retag.For(c, rs, keys.KeySet(), clients, scheme))
	add(retag.For(c, rs, keys.Key(), clients, scheme))
	add(retag.For(c, rs, vaults.Vault(), clients, scheme))
	return out
}
