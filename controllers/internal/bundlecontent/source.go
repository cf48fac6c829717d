// Package bundlecontent gives the lifecycle loops an OperatorVersion's bundle content only once it matches the
// digest the catalog resolved it to (spec.bundle.digest). Content embedded in spec is hashed again
// (bundle.ContentDigest); a bundle image is pulled by digest, with the pull options of the CatalogSource that lists
// it, through an on-disk cache shared by every loop, then loaded and validated exactly as a bundle directory in a
// catalog. The install and upgrade loops plan from the verified content (Verify); the requirements loop takes the
// CRDs of image-only bundles from it (Source.Pull).
package bundlecontent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/blang/semver/v4"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/internal/imagepull"
)

// ReasonInvalidBundle is operatorsv1alpha1.ReasonInvalidBundle, the reason of a bundle image that does not load.
const ReasonInvalidBundle = operatorsv1alpha1.ReasonInvalidBundle

// memoSize bounds how many loaded bundles Source keeps in memory.
const memoSize = 64

// Error is why a bundle's content cannot be had. Reason is a condition reason and Message names the image (or the
// field) and the cause. A Permanent error cannot be fixed by retrying (the content is not what was resolved, or
// ALM does not install it); the others (the registry, the CatalogSource or its pull Secret) may clear.
type Error struct {
	Reason, Message string
	Permanent       bool
}

func (e *Error) Error() string { return e.Message }

// Content is what a bundle installs: the OperatorVersion spec fields its ClusterServiceVersion and manifests give.
type Content struct {
	// Package and Version are the bundle's.
	Package string
	Version semver.Version
	// Install, CRDs and Objects are spec.install, spec.customresourcedefinitions and spec.objects.
	Install opv1alpha1.NamedInstallStrategy
	CRDs    opv1alpha1.CustomResourceDefinitions
	Objects []runtime.RawExtension
	// Webhooks are spec.webhookdefinitions.
	Webhooks []opv1alpha1.WebhookDescription
}

// CRD returns the bundle's CRD of group and kind, or nil.
func (c *Content) CRD(group, kind string) (*apiextv1.CustomResourceDefinition, error) {
	for i, raw := range c.Objects {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := json.Unmarshal(raw.Raw, crd); err != nil {
			return nil, fmt.Errorf("bundle object %d: %w", i, err)
		}
		if crd.Kind == "CustomResourceDefinition" && crd.Spec.Group == group && crd.Spec.Names.Kind == kind {
			return crd, nil
		}
	}
	return nil, nil
}

// fill returns a copy of ov whose bundle content is c. ov itself is not changed, and nothing is written: the loops
// plan from the copy and never change spec.
func (c *Content) fill(ov *operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	out := ov.DeepCopy()
	out.Spec.Install = *c.Install.DeepCopy()
	out.Spec.CustomResourceDefinitions = *c.CRDs.DeepCopy()
	out.Spec.WebhookDefinitions = nil
	for i := range c.Webhooks {
		out.Spec.WebhookDefinitions = append(out.Spec.WebhookDefinitions, *c.Webhooks[i].DeepCopy())
	}
	out.Spec.Objects = make([]runtime.RawExtension, len(c.Objects))
	for i := range c.Objects {
		c.Objects[i].DeepCopyInto(&out.Spec.Objects[i])
	}
	return out
}

// Source pulls bundle images with the pull options of the CatalogSource that lists them (Clients) into Cache, and
// keeps the last loaded bundles in memory by digest, so that a reconcile of an installed version reads nothing
// again. One Source is shared by the install, upgrade and requirements loops; it is safe for concurrent use. A nil
// Source verifies content embedded in spec only; a bundle image is then unavailable.
type Source struct {
	Cache   *image.BundleCache
	Clients *imagepull.Clients
	// Namespace is ALM's namespace, whose CatalogSources serve every namespace. An OperatorVersion may pull with
	// the credentials of a CatalogSource in its own namespace or in this one, never another tenant's.
	Namespace string

	mu    sync.Mutex
	memo  map[string]*Content
	order []string
}

// Pull returns the content of the bundle image ref at digest, pulled (on a miss) with the pull options of the image
// CatalogSource catalog, read through r (Secrets and ConfigMaps: use an API reader). It returns an *Error when the
// bundle cannot be had, or another error when reading the CatalogSource failed.
func (s *Source) Pull(ctx context.Context, r client.Reader, catalog types.NamespacedName, ref, digest string) (*Content, error) {
	cl, err := s.client(ctx, r, catalog, ref)
	if err != nil {
		return nil, err
	}
	if err := cl.Check(ctx, ref, digest); err != nil { // the cache serves only what these credentials may pull
		return nil, pullError(ref, digest, err)
	}
	return s.load(ctx, cl, ref, digest)
}

// Manifests returns the manifests of the bundle image ref at digest, pulled (on a miss) through the cache with the
// pull options of the image CatalogSource catalog, as Pull does: what the AppType loop's upgrade preview diffs.
func (s *Source) Manifests(ctx context.Context, r client.Reader, catalog types.NamespacedName, ref, digest string) (*bundle.Manifests, error) {
	cl, err := s.client(ctx, r, catalog, ref)
	if err != nil {
		return nil, err
	}
	if err := cl.Check(ctx, ref, digest); err != nil {
		return nil, pullError(ref, digest, err)
	}
	dir, err := s.Cache.Get(ctx, cl, ref, digest)
	if err != nil {
		return nil, pullError(ref, digest, err)
	}
	b, problems := bundle.LoadInMemory(dir, ref+"@"+digest)
	if b == nil || bundle.HasErrors(problems) {
		return nil, invalidBundle(ref, digest, problems)
	}
	return b.Manifests()
}

// client returns the image client of the image CatalogSource catalog.
func (s *Source) client(ctx context.Context, r client.Reader, catalog types.NamespacedName, ref string) (*image.Client, error) {
	if s == nil || s.Cache == nil || s.Clients == nil {
		return nil, &Error{Reason: operatorsv1alpha1.ReasonBundleUnavailable,
			Message: fmt.Sprintf("bundle image %s: this ALM runs without a bundle cache, so it cannot pull bundle images", ref)}
	}
	cs := &operatorsv1alpha1.CatalogSource{}
	err := r.Get(ctx, catalog, cs)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &Error{Reason: operatorsv1alpha1.ReasonBundleUnavailable,
			Message: fmt.Sprintf("CatalogSource %s not found: its pull options are needed to pull bundle image %s", catalog, ref)}
	case err != nil:
		return nil, fmt.Errorf("reading CatalogSource %s to pull bundle image %s: %w", catalog, ref, err)
	case cs.Spec.Image == nil:
		return nil, &Error{Reason: operatorsv1alpha1.ReasonBundleUnavailable,
			Message: fmt.Sprintf("CatalogSource %s is not an image source (no spec.image): it has no pull options for bundle image %s", catalog, ref)}
	}
	cl, err := s.Clients.For(ctx, r, cs)
	if err != nil {
		// A pull Secret or CA ConfigMap missing or malformed, or not readable: retried like an unreachable registry.
		return nil, &Error{Reason: operatorsv1alpha1.ReasonBundleUnavailable,
			Message: fmt.Sprintf("CatalogSource %s cannot pull bundle image %s: %v", catalog, ref, err)}
	}
	return cl, nil
}

// load pulls ref at digest through the cache, loads and validates it, and remembers its content.
func (s *Source) load(ctx context.Context, cl *image.Client, ref, digest string) (*Content, error) {
	if c := s.cached(digest); c != nil {
		return c, nil
	}
	dir, err := s.Cache.Get(ctx, cl, ref, digest)
	if err != nil {
		return nil, pullError(ref, digest, err)
	}
	b, problems := bundle.LoadInMemory(dir, ref+"@"+digest)
	if b == nil || bundle.HasErrors(problems) {
		return nil, invalidBundle(ref, digest, problems)
	}
	ov, err := b.OperatorVersion("")
	if err != nil {
		return nil, &Error{Reason: ReasonInvalidBundle, Permanent: true, Message: fmt.Sprintf("bundle image %s@%s: %v", ref, digest, err)}
	}
	c := &Content{Package: b.Package, Version: b.Version, Install: ov.Spec.Install,
		CRDs: ov.Spec.CustomResourceDefinitions, Objects: ov.Spec.Objects, Webhooks: ov.Spec.WebhookDefinitions}
	s.remember(digest, c)
	return c, nil
}

// pullError classifies a failed pull: content refused by a rule is permanent (a digest names one content, so
// pulling it again gives the same), except a digest mismatch (the registry or the path to it served other bytes,
// which may not happen again); the registry's answers and network errors are retried.
func pullError(ref, digest string, err error) *Error {
	var refused *image.RefusedError
	permanent := errors.As(err, &refused) && refused.Rule != image.RuleDigest
	return &Error{Reason: imagepull.Reason(err), Permanent: permanent,
		Message: fmt.Sprintf("bundle image %s (%s) cannot be pulled: %v", ref, digest, err)}
}

// invalidBundle is the error of a bundle image that does not load as a bundle: its error problems, each with the
// file (relative to the image) and the rule.
func invalidBundle(ref, digest string, problems []bundle.Problem) *Error {
	var errs []string
	for _, p := range problems {
		if p.IsError() {
			errs = append(errs, p.String())
		}
	}
	if len(errs) == 0 {
		errs = append(errs, "the bundle does not load")
	}
	return &Error{Reason: ReasonInvalidBundle, Permanent: true,
		Message: fmt.Sprintf("bundle image %s@%s is not a valid bundle: %s", ref, digest, strings.Join(errs, "; "))}
}

func (s *Source) cached(digest string) *Content {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memo[digest]
}

// remember keeps c for digest, dropping the oldest entries beyond memoSize.
func (s *Source) remember(digest string, c *Content) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memo == nil {
		s.memo = map[string]*Content{}
	}
	if _, ok := s.memo[digest]; !ok {
		s.order = append(s.order, digest)
	}
	s.memo[digest] = c
	for len(s.order) > memoSize {
		delete(s.memo, s.order[0])
		s.order = s.order[1:]
	}
}
