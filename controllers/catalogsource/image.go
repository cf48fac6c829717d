package catalogsource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/internal/imagepull"
)

// Poll intervals of image sources.
const (
	// DefaultPollInterval is how often a tag is checked when spec.image.pollInterval is not set.
	DefaultPollInterval = 10 * time.Minute
	// MinPollInterval is the shortest interval honoured for a registry that is not on loopback.
	MinPollInterval = time.Minute
	// MinLoopbackPollInterval is the shortest interval honoured for a loopback registry (local development).
	MinLoopbackPollInterval = 5 * time.Second
	// retryInterval bounds the wait before a failed pull is tried again.
	retryInterval = time.Minute
	// resolveWorkers bounds the concurrent digest requests for bundle images a catalog names by tag.
	resolveWorkers = 4
)

// pullError is a failed pull of an image source, with the condition reason that says why.
type pullError struct {
	reason string
	err    error
}

func (e *pullError) Error() string { return e.err.Error() }
func (e *pullError) Unwrap() error { return e.err }

// imageLoad is what one poll of an image source found.
type imageLoad struct {
	contents *fbc.Contents // nil when the digest is the one already served
	digest   string
	ref      string // repository@digest
}

// pullOptionsReader reads what an image source's pull options name (Secrets, a CA ConfigMap).
func (r *Reconciler) pullOptionsReader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// loadImage polls an image source: one manifest request for a tag (none for a digest reference); only a digest
// that is not the one served is pulled and parsed, into new contents that replace the old ones whole.
func (r *Reconciler) loadImage(ctx context.Context, cs *operatorsv1alpha1.CatalogSource) (*imageLoad, error) {
	ic, err := r.images().For(ctx, r.pullOptionsReader(), cs)
	var refused *image.RefusedError
	if errors.As(err, &refused) {
		return nil, &pullError{reason: imagepull.Reason(err), err: fmt.Errorf("catalog image %s: %w", cs.Spec.Image.Ref, err)}
	}
	if err != nil {
		return nil, err
	}
	ref := cs.Spec.Image.Ref
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, &invalidSpecError{fmt.Errorf("spec.image.ref %q: %w", ref, err)}
	}
	digest, err := ic.Digest(ctx, ref)
	if err != nil {
		return nil, &pullError{reason: imagepull.Reason(err), err: fmt.Errorf("catalog image %s: %w", ref, err)}
	}
	load := &imageLoad{digest: digest, ref: parsed.Context().Name() + "@" + digest}
	if old, ok := r.Registry.Digest(client.ObjectKeyFromObject(cs)); ok && old == digest {
		return load, nil // unchanged: no blob is downloaded, nothing is parsed again
	}
	cat, err := ic.PullCatalog(ctx, ref, digest)
	if err != nil {
		return nil, &pullError{reason: imagepull.Reason(err), err: fmt.Errorf("catalog image %s: %w", ref, err)}
	}
	contents, err := parseCatalog(ctx, cat, load.ref+":"+cat.ConfigsDir+"/")
	if err != nil {
		return nil, fmt.Errorf("catalog image %s: reading the extracted catalog: %w", ref, err)
	}
	resolveBundleTags(ctx, ic, contents)
	load.contents = contents
	return load, nil
}

// parsing lets one catalog be parsed at a time in this process: parsing holds a document of each file it decodes
// (fbc.LoadFS decodes two at once), and what is made of it, in memory (up to several times
// fbc.DefaultMaxDocumentBytes each), so concurrent reconciles must not multiply that.
var parsing = make(chan struct{}, 1)

// parseCatalog reads an extracted catalog: each file is parsed as a stream of documents (two files at once, merged in
// their lexical order), and the files are removed from disk afterwards.
func parseCatalog(ctx context.Context, cat *image.Catalog, prefix string) (*fbc.Contents, error) {
	defer cat.Close()
	select {
	case parsing <- struct{}{}:
		defer func() { <-parsing }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	contents, err := fbc.LoadFS(cat.FS(), prefix)
	if err != nil {
		return nil, err
	}
	return contents, cat.Close()
}

// resolveBundleTags asks the registry for the digest of every bundle image the catalog names by tag (catalogs made
// with opm name them by digest), so each OperatorVersion records the digest it was resolved from. A tag that cannot
// be resolved is a warning on its bundle: the bundle stays listed but cannot be installed.
func resolveBundleTags(ctx context.Context, ic *image.Client, c *fbc.Contents) {
	var todo []*bundle.Bundle
	for _, b := range c.Bundles {
		if b.Image != "" && b.ImageDigest == "" && !b.HasManifests() {
			todo = append(todo, b)
		}
	}
	var mu sync.Mutex
	work := make(chan *bundle.Bundle)
	var wg sync.WaitGroup
	for range min(resolveWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				d, err := ic.Digest(ctx, b.Image)
				mu.Lock()
				if err != nil {
					p := bundle.Warnf(b.Path, bundle.RuleLoadFailed, "reference bundle images by digest, or make the tag pullable",
						"bundle %s: image %s: %v", b.Name, b.Image, err)
					p.Package, p.Bundle = b.Package, b.Name
					c.Problems = append(c.Problems, p)
				}
				b.ImageDigest = d
				mu.Unlock()
			}
		}()
	}
	for _, b := range todo {
		work <- b
	}
	close(work)
	wg.Wait()
}

// pollInterval is how long an image source waits before asking for its digest again; 0 for a digest reference,
// which never changes.
func pollInterval(src *operatorsv1alpha1.ImageSource) time.Duration {
	if strings.Contains(src.Ref, "@") {
		return 0
	}
	d := DefaultPollInterval
	if src.PollInterval != nil {
		d = src.PollInterval.Duration
	}
	floor := MinPollInterval
	if _, loopback, _ := imagepull.OnLoopback(src.Ref); loopback {
		floor = MinLoopbackPollInterval
	}
	return max(d, floor)
}

// imageStatus records a poll in status.image: the served digest, the poll, and a change when the digest is new.
func imageStatus(st *operatorsv1alpha1.CatalogSourceStatus, load *imageLoad, changed bool, now metav1.Time) {
	if st.Image == nil {
		st.Image = &operatorsv1alpha1.ImageStatus{}
	}
	st.Image.LastPoll = &now
	if load == nil {
		return
	}
	if changed || st.Image.Digest != load.digest {
		st.Image.LastChange = &now
	}
	st.Image.Ref, st.Image.Digest = load.ref, load.digest
}
