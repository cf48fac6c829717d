// Package bundle loads and validates one OLM registry+v1 bundle: a directory with manifests/ (a
// ClusterServiceVersion, CRDs, other objects) and metadata/annotations.yaml. CRDs are normalized to
// apiextensions.k8s.io/v1, the operator-framework validators' findings are classified, and ALM's own checks (the
// hostile-input policy among them) are added. Everything wrong is a Problem with the file and the rule; every other
// catalog package reports its findings as Problems too.
package bundle

import (
	"fmt"
)

// Severity says whether a Problem excludes the bundle it is about.
type Severity string

const (
	// SeverityError excludes the bundle (or the document) the problem is about; the rest of the catalog still serves.
	SeverityError Severity = "error"
	// SeverityWarning is reported and never blocks anything.
	SeverityWarning Severity = "warning"
)

// Rules reported in Problem.Rule. Rules from the operator-framework bundle validators are reported as
// "olm-" followed by the validator's error type, e.g. "olm-CSVFileNotValid".
const (
	RuleMalformedYAML        = "malformed-yaml"
	RuleMalformedFBC         = "malformed-fbc"
	RuleInvalidObject        = "invalid-object"
	RuleMissingManifests     = "missing-manifests-dir"
	RuleMissingAnnotations   = "missing-annotations"
	RuleMissingPackage       = "missing-package"
	RuleMissingChannels      = "missing-channels"
	RuleUnsupportedMediaType = "unsupported-mediatype"
	RuleMissingCSV           = "missing-csv"
	RuleMultipleCSVs         = "multiple-csvs"
	RuleNestedDirectory      = "nested-directory"
	RuleInvalidSemver        = "invalid-semver"
	RuleInvalidSkipRange     = "invalid-skiprange"
	RuleInstallStrategy      = "install-strategy"
	RuleReplacesSelf         = "replaces-self"
	RuleBundleTooLarge       = "bundle-too-large"
	RuleLoadFailed           = "load-failed"
	RuleCRDConversion        = "crd-conversion"
	RuleNormalized           = "normalized"
	RuleUnsupportedObject    = "unsupported-object"
	RuleIgnoredDocument      = "ignored-document"
	RuleDuplicateBundle      = "duplicate-bundle"
	RuleDuplicateVersion     = "duplicate-version"
	RuleDuplicatePackage     = "duplicate-package"
	RuleMissingBundle        = "missing-bundle"
	RuleBundleNotInChannel   = "bundle-not-in-channel"
	RuleDanglingReplaces     = "dangling-replaces"
	RuleReplacesCycle        = "replaces-cycle"
	RuleReplacesNotLower     = "replaces-not-lower"
	RuleCRDOwnedTwice        = "crd-owned-by-two-packages"
	RuleDefaultChannel       = "default-channel"
	RuleConfigMap            = "invalid-configmap"
	RuleConfigMapTooLarge    = "configmap-too-large"
)

// Problem is one thing wrong with the input, reported with the file (or ConfigMap) where it is.
type Problem struct {
	// Path is the file, directory or ConfigMap ("configmap/<namespace>/<name>") the problem is in.
	Path string `json:"path"`
	// Rule is a short, stable name of the rule that was broken (the Rule* constants).
	Rule string `json:"rule"`
	// Detail says what is wrong.
	Detail string `json:"detail"`
	// Hint says how to fix it, when there is something useful to say.
	Hint string `json:"hint,omitempty"`
	// Severity: an error excludes the bundle, a warning does not.
	Severity Severity `json:"severity"`
	// Package and Bundle name what the problem excludes or is about, when known.
	Package string `json:"package,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// Catalog is the catalog it was found in (set by index.New).
	Catalog string `json:"catalog,omitempty"`
}

// String is the one-line form `path: rule: detail (hint)`, with "warning: " before the detail for warnings.
func (p Problem) String() string {
	s := fmt.Sprintf("%s: %s: ", p.Path, p.Rule)
	if p.Severity == SeverityWarning {
		s += "warning: "
	}
	s += p.Detail
	if p.Hint != "" {
		s += " (hint: " + p.Hint + ")"
	}
	return s
}

// IsError reports whether the problem excludes what it is about.
func (p Problem) IsError() bool { return p.Severity == SeverityError }

// HasErrors reports whether any problem is an error.
func HasErrors(problems []Problem) bool {
	for _, p := range problems {
		if p.IsError() {
			return true
		}
	}
	return false
}

// Errorf is an error Problem at path: it excludes the bundle or document it is about.
func Errorf(path, rule, hint, format string, args ...any) Problem {
	return Problem{Path: path, Rule: rule, Detail: fmt.Sprintf(format, args...), Hint: hint, Severity: SeverityError}
}

// Warnf is a warning Problem at path: it is reported and never excludes anything.
func Warnf(path, rule, hint, format string, args ...any) Problem {
	return Problem{Path: path, Rule: rule, Detail: fmt.Sprintf(format, args...), Hint: hint, Severity: SeverityWarning}
}
