package bundlecontent

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/image"
)

// Result is the outcome of Verify: Verified or Err is the BundleVerified condition. An OperatorVersion without
// spec.bundle (written by hand, or created before ALM recorded bundle digests) is not verified: Err says so
// (ReasonNoBundleDigest, permanent) and nothing of it is applied.
type Result struct {
	// Content is the OperatorVersion to plan and apply from: ov itself when its content is in spec, a copy of ov
	// filled with the bundle image's content (spec.install, spec.customresourcedefinitions, spec.objects), or nil
	// when the content is not verified (Err says why). It is never written back.
	Content *operatorsv1alpha1.OperatorVersion
	// Verified says what was verified, naming the digest, when Content is.
	Verified string
	// Err says why the content is not verified.
	Err *Error
}

// Verify returns ov's bundle content once it matches spec.bundle.digest. Content in spec is hashed again. Content
// in a bundle image (spec.bundle.image) is pulled by digest with the pull options of the CatalogSource spec.source
// names, through the shared cache, and loaded as a bundle directory in a catalog. Unless verifiedBefore (the version's
// BundleVerified condition is True: this digest was checked already, and spec.bundle is immutable), a tag is first
// resolved with one request to the registry, and a tag that moved away from spec.bundle.digest fails the version:
// the catalog resolved other content than the tag now names. Once verified, the version is pulled by digest only,
// so a tag moving later does not fail a running version. r reads the CatalogSource and its pull Secrets and CA
// ConfigMap (use an API reader). The error is for reads that may succeed on a retry (the API server).
func (s *Source) Verify(ctx context.Context, r client.Reader, ov *operatorsv1alpha1.OperatorVersion, verifiedBefore bool) (Result, error) {
	ref := ov.Spec.Bundle
	switch {
	case ref == nil:
		return Unrecorded(ov), nil
	case ref.Image == "":
		return CheckEmbedded(ov), nil
	}
	c, failed, err := outcome(s.verifyImage(ctx, r, ov, verifiedBefore))
	if err != nil {
		return Result{}, err
	}
	if failed == nil {
		failed = matches(ov, c)
	}
	if failed != nil {
		return Result{Err: failed}, nil //nolint:nilerr // failed is the outcome, reported in status; not retried by the controller
	}
	return Result{Content: c.fill(ov), Verified: fmt.Sprintf("bundle image %s verified at %s", ref.Image, ref.Digest)}, nil
}

// outcome separates why the content cannot be had (an *Error, reported in status) from an error to retry.
func outcome(c *Content, err error) (*Content, *Error, error) {
	var e *Error
	if errors.As(err, &e) {
		return nil, e, nil
	}
	return c, nil, err
}

// Unrecorded is the Result of an OperatorVersion without spec.bundle: its content has no digest to be verified
// against, so none of it (spec.install, spec.customresourcedefinitions, spec.objects, spec.webhookdefinitions) is
// applied. ALM records spec.bundle on every version it creates, and spec.bundle can be neither added nor removed
// afterwards; a version without one was written by someone else. It is permanent: a newer version has to replace it.
func Unrecorded(ov *operatorsv1alpha1.OperatorVersion) Result {
	return Result{Err: &Error{Reason: operatorsv1alpha1.ReasonNoBundleDigest, Permanent: true,
		Message: fmt.Sprintf("OperatorVersion %s/%s has no spec.bundle, so its content (spec.install, spec.objects, ...) has no digest to be verified against "+
			"and nothing of it is applied: ALM installs only content it resolved from a catalog and recorded by digest. "+
			"Declare an AppType for package %q instead of writing an OperatorVersion", ov.Namespace, ov.Name, ov.Spec.PackageName)}}
}

// CheckEmbedded verifies content embedded in spec: its ContentDigest must be spec.bundle.digest. A mismatch means
// spec.install, spec.customresourcedefinitions or spec.objects changed after the version was resolved (e.g. edited
// by hand); it is permanent and nothing is applied.
func CheckEmbedded(ov *operatorsv1alpha1.OperatorVersion) Result {
	want := ov.Spec.Bundle.Digest
	got, err := bundle.ContentDigest(&ov.Spec)
	if err != nil {
		return Result{Err: &Error{Reason: operatorsv1alpha1.ReasonDigestMismatch, Permanent: true,
			Message: fmt.Sprintf("the bundle content in spec cannot be hashed: %v", err)}}
	}
	if got != want {
		return Result{Err: &Error{Reason: operatorsv1alpha1.ReasonDigestMismatch, Permanent: true,
			Message: fmt.Sprintf("the bundle content in spec (install, customresourcedefinitions, objects) has digest %s, but spec.bundle.digest is %s: "+
				"it changed after the version was resolved, so nothing is applied", got, want)}}
	}
	return Result{Content: ov, Verified: "the bundle content in spec matches spec.bundle.digest " + want}
}

// verifyImage resolves a tag (unless verifiedBefore) and pulls the bundle image by digest.
func (s *Source) verifyImage(ctx context.Context, r client.Reader, ov *operatorsv1alpha1.OperatorVersion, verifiedBefore bool) (*Content, error) {
	ref, want := ov.Spec.Bundle.Image, ov.Spec.Bundle.Digest
	if _, err := name.ParseReference(ref); err != nil {
		return nil, &Error{Reason: ReasonInvalidBundle, Permanent: true,
			Message: fmt.Sprintf("spec.bundle.image %q is not an image reference: %v", ref, err)}
	}
	if c := s.cached(want); c != nil && verifiedBefore {
		return c, nil
	}
	if ov.Spec.Source == nil {
		return nil, &Error{Reason: operatorsv1alpha1.ReasonBundleUnavailable,
			Message: fmt.Sprintf("spec.source names no CatalogSource, whose pull options are needed to pull bundle image %s", ref)}
	}
	if src := ov.Spec.Source; src.Namespace != ov.Namespace && (s == nil || src.Namespace != s.Namespace) {
		return nil, &Error{Reason: operatorsv1alpha1.ReasonInvalidSpec, Permanent: true,
			Message: fmt.Sprintf("spec.source names CatalogSource %s/%s in another namespace: a version pulls its bundle image with the pull options of a CatalogSource in its own namespace or in ALM's",
				src.Namespace, src.Name)}
	}
	cl, err := s.client(ctx, r, types.NamespacedName{Namespace: ov.Spec.Source.Namespace, Name: ov.Spec.Source.Name}, ref)
	if err != nil {
		return nil, err
	}
	if !verifiedBefore {
		if err := checkAccess(ctx, cl, ref, want); err != nil {
			return nil, err
		}
	}
	return s.load(ctx, cl, ref, want)
}

// checkAccess asks the registry once, with the catalog's credentials, for what ref names: a tag's digest must still
// be want (else the tag moved); a digest reference must be served at all. The shared cache is keyed by digest, so
// this is what keeps it as private as the registry: a tenant cannot install another catalog's private bundle by
// naming its digest.
func checkAccess(ctx context.Context, cl *image.Client, ref, want string) error {
	if r, err := name.ParseReference(ref); err == nil {
		if _, pinned := r.(name.Digest); pinned {
			if err := cl.Check(ctx, ref, want); err != nil {
				return pullError(ref, want, err)
			}
			return nil
		}
	}
	got, err := cl.Digest(ctx, ref)
	if err != nil {
		return pullError(ref, want, err)
	}
	if e := tagMoved(ref, want, got); e != nil {
		return e
	}
	return nil
}

// tagMoved is the error of a bundle image reference that now names digest got instead of want.
func tagMoved(ref, want, got string) *Error {
	if got == want {
		return nil
	}
	return &Error{Reason: operatorsv1alpha1.ReasonDigestMismatch, Permanent: true,
		Message: fmt.Sprintf("bundle image %s now names %s, but this version was resolved to %s: the tag moved since the catalog was read, so nothing is applied",
			ref, got, want)}
}

// matches refuses a bundle image that holds another package or version than the OperatorVersion says.
func matches(ov *operatorsv1alpha1.OperatorVersion, c *Content) *Error {
	if c.Package == ov.Spec.PackageName && c.Version.Equals(ov.Spec.Version.Version) {
		return nil
	}
	return &Error{Reason: ReasonInvalidBundle, Permanent: true,
		Message: fmt.Sprintf("bundle image %s@%s holds package %s version %s, but this OperatorVersion is package %s version %s",
			ov.Spec.Bundle.Image, ov.Spec.Bundle.Digest, c.Package, c.Version, ov.Spec.PackageName, ov.Spec.Version.Version)}
}
