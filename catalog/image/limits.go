package image

import (
	"fmt"
	"io"
)

// Limits bound what one pull may read. A zero field takes the default of the kind of image being pulled
// (DefaultCatalogLimits or DefaultBundleLimits).
type Limits struct {
	// MaxCompressed bounds the sum of the layers' compressed sizes: checked against the manifest before any
	// layer is downloaded, and counted while reading.
	MaxCompressed int64
	// MaxUncompressed bounds the sum of the layers' uncompressed tar streams, counted while decompressing (a
	// decompression bomb is stopped as soon as it crosses the limit).
	MaxUncompressed int64
	// MaxEntries bounds the number of tar entries over all layers.
	MaxEntries int
	// MaxFileSize bounds the size of any one file.
	MaxFileSize int64
}

const (
	kib = int64(1) << 10
	mib = kib << 10
	gib = mib << 10

	// maxConfigSize caps an image config blob (labels, history): real ones are a few KiB.
	maxConfigSize = 4 * mib
)

// DefaultCatalogLimits are the limits of a catalog pull: 1 GiB compressed, 2 GiB uncompressed, 250,000 entries,
// 256 MiB per file. Real catalog images (a base image with opm, tens of thousands of entries, plus hundreds of MB of
// FBC) fit comfortably. The names of the files kept are in memory during the pull, and each becomes a file on disk
// that the catalog's parse walks: 200,000 files under /configs took a poll 195 MiB of peak RSS and 24 s, so the
// entries are bounded well below what would pass ALM's 512 MiB (2,000,000 would take about 1.4 GiB).
func DefaultCatalogLimits() Limits {
	return Limits{MaxCompressed: gib, MaxUncompressed: 2 * gib, MaxEntries: 250_000, MaxFileSize: 256 * mib}
}

// DefaultBundleLimits are the limits of a bundle pull: 32 MiB compressed, 64 MiB uncompressed, 10,000 entries,
// 16 MiB per file. A registry+v1 bundle is a few manifests.
func DefaultBundleLimits() Limits {
	return Limits{MaxCompressed: 32 * mib, MaxUncompressed: 64 * mib, MaxEntries: 10_000, MaxFileSize: 16 * mib}
}

// withDefaults fills the zero fields of l from def.
func (l Limits) withDefaults(def Limits) Limits {
	if l.MaxCompressed <= 0 {
		l.MaxCompressed = def.MaxCompressed
	}
	if l.MaxUncompressed <= 0 {
		l.MaxUncompressed = def.MaxUncompressed
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = def.MaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = def.MaxFileSize
	}
	return l
}

// ruleError is raised by a budgetReader; the layer reader turns it into a *RefusedError naming the entry.
type ruleError struct {
	rule, detail string
}

func (e *ruleError) Error() string { return fmt.Sprintf("refused (%s): %s", e.rule, e.detail) }

// budget is a byte budget shared by the readers of all layers of one pull.
type budget struct {
	rule  string
	limit int64
	used  int64
}

// budgetReader counts what it reads against a budget and fails with a *ruleError as soon as the budget is
// exceeded, so at most limit+1 bytes are ever read through it.
type budgetReader struct {
	r io.Reader
	b *budget
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if rest := br.b.limit - br.b.used + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := br.r.Read(p)
	br.b.used += int64(n)
	if br.b.used > br.b.limit {
		return n, &ruleError{rule: br.b.rule, detail: fmt.Sprintf("more than %d bytes", br.b.limit)}
	}
	return n, err
}

// sourceError marks an error of the blob stream itself (network, or go-containerregistry's digest verification),
// as opposed to an error of decoding what it delivered.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &sourceError{err: err}
	}
	return n, err
}
