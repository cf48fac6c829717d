package bundle

import (
	"fmt"
	"strings"

	valerrors "github.com/operator-framework/api/pkg/validation/errors"
)

// Rules for findings of the operator-framework validators and ALM's installability checks. Installability decides:
// a finding is an error only when the bundle cannot be installed correctly (the API server would refuse an object,
// the install strategy is unusable, the version graph is broken); everything else is a warning.
const (
	RuleInvalidCSVName       = "invalid-csv-name"
	RuleInvalidReplacesName  = "invalid-replaces-name"
	RuleALMExamples          = "alm-examples"
	RuleMinKubeVersion       = "min-kube-version"
	RuleCSVFieldMissing      = "csv-field-missing"
	RuleAnnotationCase       = "annotation-case"
	RulePropertiesAnnotation = "properties-annotation"
	RuleInvalidCRD           = "invalid-crd"
	RuleCRDAPIApproval       = "crd-api-approval"
	RuleDuplicateCRD         = "duplicate-crd"
	RuleOwnedCRDMissing      = "owned-crd-missing"
	RuleCRDNotOwned          = "crd-not-owned"
	RuleServiceAccountMerged = "service-account-merged"
	RuleBundleName           = "bundle-name"
	RuleRelatedImages        = "related-images"
	RuleInvalidWebhook       = "invalid-webhook"
)

// severityIgnored marks validator findings that do not apply to ALM; they are not reported.
const severityIgnored Severity = "ignored"

// Classification is how ALM treats one kind of operator-framework validator finding.
type Classification struct {
	// Rule is the ALM rule the finding is reported under.
	Rule string
	// Severity is error, warning, or "ignored" (not reported: it does not apply to ALM).
	Severity Severity
	// Match is a piece of the validator's message (case-insensitive) that identifies the finding.
	Match []string
	// Hint says how to fix it.
	Hint string
	// Why is the reason for the severity, as documented in catalog/README.md.
	Why string
}

// olmClassifications classifies the findings of operator-framework's DefaultBundleValidators; the first row whose
// Match is found in the message applies. Findings no row matches keep the validator's own level, as olm-<Type>.
var olmClassifications = []Classification{
	{RuleInvalidCSVName, SeverityError, []string{"metadata.name "}, "use a DNS-1123 name of at most 63 characters, e.g. my-operator.v1.2.3",
		"the name becomes the OperatorVersion's name and a label value; the API server refuses it"},
	{RuleInvalidReplacesName, SeverityWarning, []string{"spec.replaces "}, "replaces names the previous bundle's CSV metadata.name",
		"no bundle can have that name; the edge is never used (see dangling-replaces)"},
	{severityIgnoredRule, severityIgnored, []string{"install mode", "installmode"}, "",
		"ALM has no OperatorGroups; install modes do not apply"},
	{RuleMinKubeVersion, SeverityWarning, []string{"minkubeversion"}, "set spec.minKubeVersion, e.g. 1.27.0",
		"ALM does not enforce minKubeVersion; almctl prints one summary line (all with -v)"},
	{RuleCSVFieldMissing, SeverityWarning, []string{"required field missing"}, "fill in the CSV field",
		"the fields ALM installs from (version, install strategy) have their own error rules"},
	{RuleAnnotationCase, SeverityWarning, []string{"uses wrong case"}, "spell the annotation as the message says",
		"the misspelt annotation is ignored, as OLM ignores it"},
	{RulePropertiesAnnotation, SeverityWarning, []string{"olm.properties"}, "move the properties to metadata/properties.yaml",
		"informational"},
	{RuleDuplicateCRD, SeverityError, []string{"duplicate crd"}, "ship each CRD once, as apiextensions.k8s.io/v1",
		"two definitions of one kind: which one is installed would be arbitrary"},
	{RuleOwnedCRDMissing, SeverityError, []string{"owned crd"}, "add the CRD to manifests/ or list it under required",
		"the CSV owns a kind nobody can create, so the version's requirements are never met"},
	{RuleCRDNotOwned, SeverityWarning, []string{"but not defined in csv"}, "list the CRD under spec.customresourcedefinitions.owned",
		"the CRD is installed and owned by the version anyway, as OLM applies every CRD of a bundle"},
	{RuleServiceAccountMerged, SeverityWarning, []string{"invalid service account"}, "remove the ServiceAccount manifest unless it carries labels, annotations or imagePullSecrets you need",
		"the bundle's ServiceAccount is merged with the install strategy's (its labels, annotations and imagePullSecrets are kept)"},
	{RuleALMExamples, SeverityWarning, []string{"example annotation", "invalid example", "decoding example", "example must have", "should have an example", "parse plural.group", "annotations not found"}, "make alm-examples a JSON list of objects of the kinds the CSV owns",
		"alm-examples is documentation; nothing is installed from it"},
	{severityIgnoredRule, severityIgnored, []string{"bundle compressed size", "bundle size"}, "",
		"ALM checks the uncompressed size itself (bundle-too-large)"},
	{RuleBundleName, SeverityWarning, []string{"release versioning"}, "name the bundle <package>-v<version>-<release>",
		"the CSV name is still unique; nothing depends on the pattern"},
	{RuleRelatedImages, SeverityWarning, []string{"relatedimages"}, "fix spec.relatedImages",
		"ALM does not pull related images; they are for mirroring"},
}

// severityIgnoredRule is the rule name of ignored findings (never shown).
const severityIgnoredRule = "ignored"

// OLMClassifications returns the classification table of operator-framework validator findings.
func OLMClassifications() []Classification {
	return append([]Classification(nil), olmClassifications...)
}

// classifyOLM turns one validator finding into a problem at path (severityIgnored when it does not apply).
func classifyOLM(e valerrors.Error, path string) Problem {
	msg := e.Error()
	low := strings.ToLower(e.Detail)
	for _, c := range olmClassifications {
		for _, m := range c.Match {
			if strings.Contains(low, strings.ToLower(m)) {
				return Problem{Path: path, Rule: c.Rule, Detail: shortDetail(c.Rule, e), Hint: c.Hint, Severity: c.Severity}
			}
		}
	}
	sev := SeverityWarning
	if e.Level == valerrors.LevelError {
		sev = SeverityError
	}
	return Problem{Path: path, Rule: "olm-" + string(e.Type), Detail: msg, Severity: sev}
}

// shortDetail is the detail of a finding: the validator's message, said shortly where it is long.
func shortDetail(rule string, e valerrors.Error) string {
	switch rule {
	case RuleMinKubeVersion:
		if strings.Contains(e.Detail, "not informed") {
			return "spec.minKubeVersion is not set"
		}
	case RuleServiceAccountMerged:
		return fmt.Sprintf("ServiceAccount %v is also the install strategy's; the two are merged", e.BadValue)
	case RuleCRDNotOwned:
		return e.Detail + "; it is installed and owned by this version"
	}
	if e.Field != "" {
		return e.Field + ": " + e.Detail
	}
	return e.Detail
}
