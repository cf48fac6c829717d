package image

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/almproject/alm/catalog/registrynet"
)

// Options say how a Client reaches registries.
type Options struct {
	// Keychain resolves credentials per registry: KeychainFromDockerConfigJSON for pull Secrets (the controller),
	// authn.DefaultKeychain for the docker config and credential helpers (the CLI). Nil means anonymous.
	Keychain authn.Keychain
	// CABundle is PEM certificates trusted in addition to the system roots.
	CABundle []byte
	// Insecure allows plain HTTP to a registry on loopback: HTTPS is tried first, then HTTP, and an HTTP connection
	// is made only to a loopback address (the address dialled, after name resolution). Without it no request goes
	// over plain HTTP, though go-containerregistry would try HTTP by itself for loopback, *.local and RFC 1918
	// registries (RulePlainHTTP).
	Insecure bool
	// DenyLoopback refuses to connect to a loopback or unspecified address (ALM's own host: its metrics and probe
	// endpoints, sidecars), whatever name, redirect or DNS answer leads there. Set for catalogs of tenants: a
	// CatalogSource's author chooses the hosts it names.
	DenyLoopback bool
	// Dial replaces the dialer (tests: it records the addresses dialled and connects nowhere); DenyLoopback is then
	// the caller's to enforce. The plain-HTTP rules (Insecure) apply all the same.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LookupIP resolves host names for the plain-HTTP check (tests: no name is looked up in DNS); nil: the system
	// resolver.
	LookupIP func(ctx context.Context, host string) ([]net.IPAddr, error)
	// CatalogLimits and BundleLimits bound pulls; zero fields take DefaultCatalogLimits and DefaultBundleLimits.
	CatalogLimits, BundleLimits Limits
	// ScratchDir is where PullCatalog extracts catalogs (each to a directory of its own, removed by Catalog.Close);
	// "" means os.TempDir(). It needs room for CatalogLimits.MaxUncompressed per pull in progress.
	ScratchDir string
	// Space, shared by the Clients that extract to one ScratchDir, bounds the disk their catalog pulls in progress
	// use together; nil: each pull is bounded by CatalogLimits alone.
	Space *Space
}

// Client pulls and pushes images with one set of Options. It keeps authenticated connections per repository,
// so a catalog poller should keep one Client per source (recreate it when its credentials change). A Client is
// safe for concurrent use.
type Client struct {
	opts   Options
	puller *remote.Puller
	remote []remote.Option
	name   []name.Option
}

// NewClient returns a Client for opts; it fails only on a CA bundle with no certificate.
func NewClient(opts Options) (*Client, error) {
	rt, err := transportFor(opts)
	if err != nil {
		return nil, err
	}
	kc := opts.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain()
	}
	ropts := []remote.Option{remote.WithTransport(rt), remote.WithAuthFromKeychain(kc), remote.WithUserAgent("alm")}
	puller, err := remote.NewPuller(ropts...)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, puller: puller, remote: ropts}
	c.opts.CatalogLimits = opts.CatalogLimits.withDefaults(DefaultCatalogLimits())
	c.opts.BundleLimits = opts.BundleLimits.withDefaults(DefaultBundleLimits())
	if c.opts.ScratchDir == "" {
		c.opts.ScratchDir = os.TempDir()
	}
	if opts.Insecure {
		c.name = append(c.name, name.Insecure)
	}
	return c, nil
}

// transportFor is a Client's transport (package registrynet): the registry's TLS roots, no loopback with
// opts.DenyLoopback, plain HTTP only with opts.Insecure and to a loopback address; its refusals are RefusedErrors.
func transportFor(opts Options) (http.RoundTripper, error) {
	return registrynet.Transport(registrynet.Options{CABundle: opts.CABundle, Insecure: opts.Insecure, DenyLoopback: opts.DenyLoopback,
		Dial: opts.Dial, LookupIP: opts.LookupIP, Refused: func(addr, rule, detail string) error {
			return &RefusedError{Image: addr, Rule: rule, Detail: detail}
		}})
}

// Digest returns the manifest digest ref names now, asking the registry with one HEAD of the manifest (a GET only
// if the registry does not answer HEAD), so polling an unchanged image downloads no blob. A reference that pins
// a digest (repo@sha256:..., or repo:tag@sha256:...) returns that digest with no request: it cannot change, and
// the pull verifies it.
func (c *Client) Digest(ctx context.Context, ref string) (string, error) {
	r, err := name.ParseReference(ref, c.name...)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	if d, ok := r.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	desc, err := c.puller.Head(ctx, r)
	if err != nil && headUnsupported(err) {
		var full *remote.Descriptor
		if full, err = c.puller.Get(ctx, r); err == nil {
			desc = &full.Descriptor
		}
	}
	if err != nil {
		return "", fmt.Errorf("image %s: manifest digest: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// Check asks the registry, with this client's credentials, whether it serves ref's repository at digest: one HEAD
// of the manifest by digest (a GET only if HEAD is not answered). Content cached by digest is shared by clients with
// different credentials; Check is how a cache hit stays as private as the registry: content one catalog's
// credentials pulled is served to another only if its credentials may pull it too.
func (c *Client) Check(ctx context.Context, ref, digest string) error {
	d, err := c.pinned(ref, digest)
	if err != nil {
		return err
	}
	desc, err := c.puller.Head(ctx, d)
	if err != nil && headUnsupported(err) {
		var full *remote.Descriptor
		if full, err = c.puller.Get(ctx, d); err == nil {
			desc = &full.Descriptor
		}
	}
	if err != nil {
		return fmt.Errorf("image %s: %w", d, err)
	}
	if desc.Digest.String() != digest {
		return &RefusedError{Image: d.String(), Rule: RuleDigest, Detail: fmt.Sprintf("the registry answered %s for %s", desc.Digest, digest)}
	}
	return nil
}

// headUnsupported reports whether a HEAD failed in a way a GET may not: the method is not allowed, or the
// answer lacked the headers a digest is read from.
func headUnsupported(err error) bool {
	return Reason(err) == ReasonPullFailed
}

// pinned returns ref's repository with digest, refusing a ref that pins another digest.
func (c *Client) pinned(ref, digest string) (name.Digest, error) {
	r, err := name.ParseReference(ref, c.name...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("image %s: %w", ref, err)
	}
	h, err := v1.NewHash(digest)
	if err != nil {
		return name.Digest{}, fmt.Errorf("image %s: digest %q: %w", ref, digest, err)
	}
	if d, ok := r.(name.Digest); ok && d.DigestStr() != h.String() {
		return name.Digest{}, &RefusedError{Image: ref, Rule: RuleDigest,
			Detail: fmt.Sprintf("the reference pins %s, asked for %s", d.DigestStr(), h)}
	}
	return r.Context().Digest(h.String()), nil
}
