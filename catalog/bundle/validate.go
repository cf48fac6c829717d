package bundle

import (
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"sync"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	valerrors "github.com/operator-framework/api/pkg/validation/errors"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/policy"
)

// validateBundle runs the operator-framework CSV and bundle validators, the API server's CRD validation on every
// (normalized) CRD, and ALM's own checks, and classifies what they find.
func validateBundle(src *bundleSource, pb *parsedBundle) []Problem {
	var problems []Problem
	csvFile := pb.csvDoc.file
	fileOf := map[string]string{}
	for i := range src.docs {
		d := &src.docs[i]
		fileOf[d.head.Kind+"/"+d.head.Metadata.Name] = d.file
	}
	crdFileOf := func(gvk any) string {
		key, ok := gvk.(schema.GroupVersionKind)
		if !ok {
			return csvFile
		}
		for i, crd := range pb.crds {
			if crd.Spec.Group == key.Group && crd.Spec.Names.Kind == key.Kind {
				return fileOfCRD(pb, i, fileOf)
			}
		}
		return csvFile
	}
	mb := &manifests.Bundle{
		Name: pb.csv.Name, Package: src.ann.PackageName, CSV: pb.csv, V1CRDs: pb.crds,
		Objects: pb.objects, Size: src.size, CompressedSize: src.size,
	}
	for _, r := range validation.ClusterServiceVersionValidator.Validate(pb.csv) {
		problems = append(problems, classifyAll(r, func(valerrors.Error) string { return csvFile })...)
	}
	for _, r := range validation.BundleValidator.Validate(mb) {
		problems = append(problems, classifyAll(r, func(e valerrors.Error) string {
			if name, ok := e.BadValue.(string); ok && fileOf["ServiceAccount/"+name] != "" && strings.Contains(e.Detail, "service account") {
				return fileOf["ServiceAccount/"+name]
			}
			return crdFileOf(e.BadValue)
		})...)
	}
	for i, crd := range pb.crds {
		problems = append(problems, validateCRDCached(pb.crdKeys[i], crd, fileOfCRD(pb, i, fileOf))...)
	}
	problems = append(problems, ownChecks(pb.csv, csvFile)...)
	problems = append(problems, builtinGroupCRDs(pb.crds, func(i int) string { return fileOfCRD(pb, i, fileOf) })...)
	problems = append(problems, wildcardPermissions(pb.csv, csvFile)...)
	problems = append(problems, privilegedDeployments(pb.csv, csvFile)...)
	groups := map[string]bool{}
	for _, crd := range pb.crds {
		groups[crd.Spec.Group] = true
	}
	problems = append(problems, objectChecks(pb.objects, groups, func(i int) string { return pb.objDocs[i].file })...)
	problems = append(problems, unsupportedObjects(pb, fileOf)...)
	return problems
}

// fileOfCRD is the file the i-th CRD came from.
func fileOfCRD(pb *parsedBundle, i int, fileOf map[string]string) string {
	if d := pb.crdDocs[i]; d != nil {
		return d.file
	}
	return fileOf["CustomResourceDefinition/"+pb.crds[i].Name]
}

// classifyAll classifies the errors and warnings of one validator result; path places each finding in a file.
func classifyAll(r valerrors.ManifestResult, path func(valerrors.Error) string) []Problem {
	var problems []Problem
	for _, list := range [][]valerrors.Error{r.Errors, r.Warnings} {
		for _, e := range list {
			if p := classifyOLM(e, path(e)); p.Severity != severityIgnored {
				problems = append(problems, p)
			}
		}
	}
	return problems
}

// crdVerdicts caches validateCRD's findings by the digest of the CRD's file content: the same CRD shipped by many
// versions of a package (the usual case) is validated once per process. Findings are kept without their file.
var crdVerdicts = struct {
	sync.Mutex
	m map[[sha256.Size]byte][]Problem
}{m: map[[sha256.Size]byte][]Problem{}}

// maxCRDVerdicts bounds the cache; it starts over when full.
const maxCRDVerdicts = 20000

// validateCRDCached is validateCRD, once per CRD content (key is the digest of the file the CRD was decoded from).
func validateCRDCached(key [sha256.Size]byte, crd *apiextv1.CustomResourceDefinition, file string) []Problem {
	crdVerdicts.Lock()
	found, ok := crdVerdicts.m[key]
	crdVerdicts.Unlock()
	if !ok {
		found = validateCRD(crd, "")
		crdVerdicts.Lock()
		if len(crdVerdicts.m) >= maxCRDVerdicts {
			crdVerdicts.m = map[[sha256.Size]byte][]Problem{}
		}
		crdVerdicts.m[key] = found
		crdVerdicts.Unlock()
	}
	out := make([]Problem, len(found))
	for i, p := range found {
		p.Path = file
		out[i] = p
	}
	return out
}

// validateCRD validates a CRD as the API server validates a create of it (apiextensions.k8s.io/v1), status aside:
// a CRD the API server would refuse is an error.
func validateCRD(crd *apiextv1.CustomResourceDefinition, file string) []Problem {
	in := defaultedCopy(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(in, internal, nil); err != nil {
		return []Problem{Errorf(file, RuleCRDConversion, "ship a valid apiextensions.k8s.io/v1 CRD", "CRD %s: %v", crd.Name, err)}
	}
	var problems []Problem
	for _, e := range apiextvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
		if strings.HasPrefix(e.Field, "status") {
			continue
		}
		if strings.Contains(e.Field, apiextv1.KubeAPIApprovedAnnotation) {
			problems = append(problems, Errorf(file, RuleCRDAPIApproval,
				"CRDs in *.k8s.io and *.kubernetes.io groups need the annotation api-approved.kubernetes.io: \"<URL of the approved API review>\" (or \"unapproved, <reason>\")",
				"CRD %s in group %s: the API server refuses it as apiextensions.k8s.io/v1: %s", crd.Name, crd.Spec.Group, e.Error()))
			continue
		}
		problems = append(problems, Errorf(file, RuleInvalidCRD, "fix the field named in the message",
			"CRD %s: the API server refuses it: %s", crd.Name, e.Error()))
	}
	return problems
}

// defaultedCopy is crd with the API server's defaults, sharing with crd what defaulting does not change (the
// schemas: copying them is most of the cost of a DeepCopy). Defaulting sets names, spec.conversion, a conversion
// service's port and status.storedVersions; those are copied first.
func defaultedCopy(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	in := *crd
	in.Status.StoredVersions = slices.Clip(in.Status.StoredVersions)
	if c := crd.Spec.Conversion; c != nil {
		conv := *c
		in.Spec.Conversion = &conv
		if w := conv.Webhook; w != nil {
			hook := *w
			conv.Webhook = &hook
			if cc := hook.ClientConfig; cc != nil {
				client := *cc
				hook.ClientConfig = &client
				if svc := client.Service; svc != nil {
					ref := *svc
					client.Service = &ref
				}
			}
		}
	}
	apiextv1.SetObjectDefaults_CustomResourceDefinition(&in)
	return &in
}

// ownChecks are ALM's checks on top of the operator-framework validators.
func ownChecks(csv *opv1alpha1.ClusterServiceVersion, file string) []Problem {
	var problems []Problem
	is := csv.Spec.InstallStrategy
	if is.StrategyName != opv1alpha1.InstallStrategyNameDeployment || len(is.StrategySpec.DeploymentSpecs) == 0 {
		problems = append(problems, Errorf(file, RuleInstallStrategy, "use spec.install.strategy: deployment with at least one deployment",
			"install strategy %q with %d deployments cannot be installed", is.StrategyName, len(is.StrategySpec.DeploymentSpecs)))
	}
	if r := csv.Annotations[AnnotationSkipRange]; r != "" {
		if _, err := semver.ParseRange(r); err != nil {
			problems = append(problems, Errorf(file, RuleInvalidSkipRange, "use a semver range such as '>=1.0.0 <1.2.0'",
				"olm.skipRange %q: %v", r, err))
		}
	}
	if csv.Spec.Replaces != "" && csv.Spec.Replaces == csv.Name {
		problems = append(problems, Errorf(file, RuleReplacesSelf, "replaces names the previous version's bundle",
			"bundle %s replaces itself", csv.Name))
	}
	problems = append(problems, webhookChecks(csv, file)...)
	return problems
}

// unsupportedObjects warns about objects of kinds ALM does not install (they are left out of the bundle's objects).
func unsupportedObjects(pb *parsedBundle, fileOf map[string]string) []Problem {
	var problems []Problem
	for _, obj := range pb.unsupported {
		kind := obj.GetKind()
		problems = append(problems, Warnf(fileOf[kind+"/"+obj.GetName()], RuleUnsupportedObject,
			"ALM installs CRDs and "+policy.InstallableKindNames(),
			"%s %s (%s) is not installed by ALM", kind, obj.GetName(), obj.GroupVersionKind().GroupVersion()))
	}
	return problems
}
