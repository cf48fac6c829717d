package image

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/almproject/alm/catalog/registrynet"
)

// Rules name what a *RefusedError refused. They are stable strings, fit for status messages and tests.
const (
	// RuleCompressedSize: the layers' compressed size (from the manifest, or counted while reading) is over
	// Limits.MaxCompressed, or the image config is over its fixed cap.
	RuleCompressedSize = "compressed-size"
	// RuleUncompressedSize: the uncompressed tar streams are over Limits.MaxUncompressed (a decompression bomb).
	RuleUncompressedSize = "uncompressed-size"
	// RuleEntries: more tar entries, over all layers, than Limits.MaxEntries.
	RuleEntries = "entry-count"
	// RuleFileSize: one file is larger than Limits.MaxFileSize.
	RuleFileSize = "file-size"
	// RuleTraversal: an entry name, or a whiteout, climbs out of the image root with "..".
	RuleTraversal = "path-traversal"
	// RuleAbsolute: an entry name is absolute.
	RuleAbsolute = "absolute-path"
	// RuleLinkEscape: a symlink or hard link inside an extracted directory points outside it (or nowhere, for a
	// hard link).
	RuleLinkEscape = "link-escape"
	// RuleEntryType: an entry inside an extracted directory is not a regular file, directory or link (a device
	// file, a FIFO, ...).
	RuleEntryType = "entry-type"
	// RuleDigest: content does not match its digest (a tampered blob, a registry serving another manifest than
	// the one asked for, a tag that moved).
	RuleDigest = "digest-mismatch"
	// RuleMediaType: a manifest, layer or bundle media type this package does not read (foreign layers,
	// non-registry+v1 bundles, unknown compression).
	RuleMediaType = "media-type"
	// RuleLabel: an image label that names a directory is not a clean relative path.
	RuleLabel = "label"
	// RuleSQLite: a SQLite index image (the deprecated catalog format); the detail says how to convert it.
	RuleSQLite = "sqlite-index"
	// RuleNoContent: the image has no files where its labels say the catalog or bundle is.
	RuleNoContent = "no-content"
	// RuleLoopback: a connection to a loopback address for a client with Options.DenyLoopback (Image is the
	// address).
	RuleLoopback = registrynet.RuleLoopback
)

// Reasons classify pull errors for a status condition (see Reason).
const (
	ReasonUnauthorized   = "Unauthorized"
	ReasonNotFound       = "NotFound"
	ReasonTLS            = "TLS"
	ReasonTooLarge       = "TooLarge"
	ReasonDigestMismatch = "DigestMismatch"
	ReasonRefused        = "Refused"
	ReasonUnreachable    = "Unreachable"
	// ReasonPullFailed is any other error.
	ReasonPullFailed = "PullFailed"
)

// RefusedError is content refused by a rule. Layer and Entry are empty where they do not apply (e.g. a manifest
// whose declared layer sizes are over the limit is refused before any layer is read, with Entry empty).
type RefusedError struct {
	// Image is the reference that was pulled (repository@digest).
	Image string
	// Layer is the digest of the layer the refused content is in.
	Layer string
	// Entry is the tar entry name, as written in the layer.
	Entry string
	// Rule is one of the Rule constants.
	Rule string
	// Detail says what was seen and what the limit is.
	Detail string
}

// Error implements error.
func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "image %s", e.Image)
	if e.Layer != "" {
		fmt.Fprintf(&b, ": layer %s", e.Layer)
	}
	if e.Entry != "" {
		fmt.Fprintf(&b, ": entry %q", e.Entry)
	}
	fmt.Fprintf(&b, ": refused (%s): %s", e.Rule, e.Detail)
	return b.String()
}

// Reason classifies an error returned by this package for a status condition: one of the Reason constants.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		switch refused.Rule {
		case RulePlainHTTP:
			// Refused when go-containerregistry fell back to HTTP: the HTTPS attempt's failure, if it was a TLS or a
			// connection error, says more.
			var oerr *net.OpError
			if isTLSError(err) {
				return ReasonTLS
			}
			if errors.As(err, &oerr) {
				return ReasonUnreachable
			}
		case RuleCompressedSize, RuleUncompressedSize, RuleEntries, RuleFileSize:
			return ReasonTooLarge
		case RuleDigest:
			return ReasonDigestMismatch
		}
		return ReasonRefused
	}
	if isTLSError(err) {
		return ReasonTLS
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		if r := transportReason(terr); r != "" {
			return r
		}
	}
	var nerr net.Error
	var oerr *net.OpError
	if errors.As(err, &oerr) || errors.As(err, &nerr) {
		return ReasonUnreachable
	}
	return ReasonPullFailed
}

func isTLSError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) ||
		errors.As(err, &verify) || errors.As(err, &record)
}

func transportReason(terr *transport.Error) string {
	for _, d := range terr.Errors {
		switch d.Code {
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return ReasonUnauthorized
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return ReasonNotFound
		}
	}
	switch terr.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ReasonUnauthorized
	case http.StatusNotFound:
		return ReasonNotFound
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ReasonUnreachable
	}
	return ""
}

// isDigestError reports whether err is go-containerregistry's verdict that content did not match its digest or
// declared size (its verifying reader's error types are internal, so the messages are matched).
func isDigestError(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "error verifying") ||
		strings.Contains(msg, "does not match requested digest") ||
		strings.Contains(msg, "does not match expected size")
}
