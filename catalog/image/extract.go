package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/almproject/alm/catalog/internal/readahead"
)

const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
	maxLinkHops    = 40
)

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// node is a file or symlink kept from the layers, with the index of the layer that wrote it. A file's content is
// on disk, in a staged file of the extraction's staging directory (shared by the copies a link makes).
type node struct {
	layer  int
	staged string // the staged file holding the content, if not isLink
	link   string // symlink target (an image path), if isLink
	isLink bool
}

// extraction applies an image's layers in order to a view of the directories it keeps (roots, image paths such as
// "configs"), with whiteouts, and enforces the limits and the entry rules. The view (names, layers, links) is in
// memory; the files' contents are streamed to disk as they are read, each to a staged file of its own in stage,
// so memory does not grow with the size of the files: no more than the limits allow is ever written. Outside the
// roots only names, sizes and counts are checked and nothing is kept, except whether each probe path exists.
type extraction struct {
	image    string
	limits   Limits
	roots    []string
	probes   map[string]int // probe path -> layer that wrote it; absent if it does not exist
	files    map[string]*node
	dirs     map[string]struct{} // the directories of the kept files (ever: a stale one only costs a walk)
	stage    string              // directory of the staged files, created by the caller
	staged   int                 // staged files written so far (their names)
	space    *Space              // where the staged files' sizes are reserved (nil: nowhere)
	reserved int64               // bytes reserved in space

	walks                    int // removals that walked all kept files
	entries                  int
	compressed, uncompressed budget
}

func newExtraction(image, stage string, limits Limits, roots []string, probes ...string) *extraction {
	x := &extraction{image: image, stage: stage, limits: limits, roots: roots, probes: map[string]int{},
		files: map[string]*node{}, dirs: map[string]struct{}{},
		compressed:   budget{rule: RuleCompressedSize, limit: limits.MaxCompressed},
		uncompressed: budget{rule: RuleUncompressedSize, limit: limits.MaxUncompressed}}
	for _, p := range probes {
		x.probes[p] = -1
	}
	return x
}

// exists reports whether a probe path exists after the layers applied so far.
func (x *extraction) exists(probe string) bool { return x.probes[probe] >= 0 }

// run applies all layers of f, then materializes symlinks.
func (x *extraction) run(f *fetched) error {
	for i, desc := range f.layers {
		l, err := f.img.LayerByDigest(desc.Digest)
		if err != nil {
			return fmt.Errorf("image %s: layer %s: %w", x.image, desc.Digest, err)
		}
		if err := x.readLayer(i, l, desc.Digest); err != nil {
			return err
		}
	}
	return x.resolveLinks()
}

// readLayer streams one layer: blob (verified by go-containerregistry, counted) -> decompressor -> tar (counted).
func (x *extraction) readLayer(i int, l v1.Layer, digest v1.Hash) error {
	rc, err := l.Compressed()
	if err != nil {
		return x.layerError(digest, "", &sourceError{err: err}, nil)
	}
	defer rc.Close()
	blob := bufio.NewReader(&budgetReader{r: sourceReader{r: rc}, b: &x.compressed})
	dec, closeDec, err := decompressor(blob)
	if err != nil {
		return x.layerError(digest, "", err, blob)
	}
	defer closeDec()
	ahead := readahead.New(dec) // decompression overlaps with writing the files to disk
	stream := &budgetReader{r: ahead, b: &x.uncompressed}
	entry, err := x.readTar(i, tar.NewReader(stream))
	if err == nil {
		// Read to the end so that the blob's digest is verified, and trailing data is counted.
		_, err = io.Copy(io.Discard, stream)
	}
	ahead.Stop() // blob is read here only from now on
	if err == nil {
		_, err = io.Copy(io.Discard, blob)
	}
	return x.layerError(digest, entry, err, blob)
}

// decompressor returns a reader of the tar stream in blob, by its magic bytes: gzip, zstd or none.
func decompressor(blob *bufio.Reader) (io.Reader, func(), error) {
	magic, err := blob.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return nil, nil, err
	}
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		gz, err := gzip.NewReader(blob)
		if err != nil {
			return nil, nil, err
		}
		return gz, func() { _ = gz.Close() }, nil
	case bytes.Equal(magic, zstdMagic):
		zr, err := zstd.NewReader(blob, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(256*mib)), zstd.WithDecoderMaxWindow(uint64(64*mib)))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	return blob, func() {}, nil
}

// layerError turns err into the error of the pull: a rule's refusal naming the entry, a digest mismatch (a
// layer that fails to decode is first read to its end, so that tampering is reported as such), or err wrapped.
func (x *extraction) layerError(digest v1.Hash, entry string, err error, blob io.Reader) error {
	if err == nil {
		return nil
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err
	}
	var rerr *ruleError
	if errors.As(err, &rerr) {
		return &RefusedError{Image: x.image, Layer: digest.String(), Entry: entry, Rule: rerr.rule, Detail: rerr.detail}
	}
	var serr *sourceError
	if !errors.As(err, &serr) && blob != nil {
		if _, derr := io.Copy(io.Discard, blob); isDigestError(derr) {
			err = derr
		}
	}
	if isDigestError(err) {
		return &RefusedError{Image: x.image, Layer: digest.String(), Rule: RuleDigest, Detail: err.Error()}
	}
	if entry != "" {
		return fmt.Errorf("image %s: layer %s: entry %q: %w", x.image, digest, entry, err)
	}
	return fmt.Errorf("image %s: layer %s: %w", x.image, digest, err)
}

// readTar applies the entries of layer i; it returns the name of the entry an error is about.
func (x *extraction) readTar(i int, tr *tar.Reader) (string, error) {
	last := ""
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return "", nil
		}
		if err != nil && (hdr == nil || !errors.Is(err, tar.ErrInsecurePath)) {
			return last, err
		}
		last = hdr.Name
		x.entries++
		if x.entries > x.limits.MaxEntries {
			return last, &ruleError{rule: RuleEntries, detail: fmt.Sprintf("more than %d entries", x.limits.MaxEntries)}
		}
		if err := x.entry(i, hdr, tr); err != nil {
			return last, err
		}
	}
}
