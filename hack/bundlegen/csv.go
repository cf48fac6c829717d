package bundlegen

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	opversion "github.com/operator-framework/api/pkg/lib/version"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/almproject/alm/catalog/bundle"
)

// AnnotationSkipRange is the CSV annotation that carries a version's skipRange.
const AnnotationSkipRange = "olm.skipRange"

// containerName is the name of the operator's container in its Deployment.
const containerName = "manager"

// nonRootUID is the user and group the images run as (see hack/images).
const nonRootUID = 65532

// csvInput is what a ClusterServiceVersion is built from besides the package and version.
type csvInput struct {
	crds               []*apiextv1.CustomResourceDefinition
	clusterPermissions []rbacv1.PolicyRule
	permissions        []rbacv1.PolicyRule
	// examples are the package's examples of the kinds this version ships.
	examples []map[string]any
}

// buildCSV returns the ClusterServiceVersion of one version.
func buildCSV(p *Package, v Version, in csvInput) (*opv1alpha1.ClusterServiceVersion, error) {
	examples := in.examples
	if examples == nil {
		examples = []map[string]any{}
	}
	almExamples, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	csv := &opv1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: opv1alpha1.SchemeGroupVersion.String(), Kind: opv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: p.BundleName(v.Version),
			Annotations: map[string]string{
				"alm-examples":   string(almExamples),
				"capabilities":   "Basic Install",
				"containerImage": p.ImageFor(v),
				"description":    firstLine(p.Description),
			},
		},
		Spec: opv1alpha1.ClusterServiceVersionSpec{
			DisplayName:    p.DisplayName,
			Description:    description(p, v),
			Version:        opversion.OperatorVersion{Version: semver.MustParse(v.Version)},
			Replaces:       v.Replaces,
			Skips:          v.Skips,
			MinKubeVersion: p.MinKubeVersion,
			Maturity:       "stable",
			Keywords:       p.Keywords,
			Provider:       opv1alpha1.AppLink{Name: "ALM project"},
			Maintainers:    []opv1alpha1.Maintainer{{Name: "ALM project", Email: "alm@example.com"}},
			InstallModes:   installModes(p.InstallModes),
			CustomResourceDefinitions: opv1alpha1.CustomResourceDefinitions{
				Owned:    ownedCRDs(in.crds),
				Required: requiredCRDs(p.Required),
			},
			InstallStrategy: opv1alpha1.NamedInstallStrategy{
				StrategyName: opv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: opv1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []opv1alpha1.StrategyDeploymentSpec{{
						Name: p.Name, Label: labels(p), Spec: deployment(p, v),
					}},
					ClusterPermissions: strategyPermissions(p.Name, in.clusterPermissions),
					Permissions:        strategyPermissions(p.Name, in.permissions),
				},
			},
		},
	}
	if v.SkipRange != "" {
		csv.Annotations[AnnotationSkipRange] = v.SkipRange
	}
	if v.Handoff != "" {
		csv.Annotations[bundle.AnnotationHandoff] = v.Handoff
	}
	return csv, nil
}

func description(p *Package, v Version) string {
	d := strings.TrimSpace(p.Description)
	if c := strings.TrimSpace(v.Changes); c != "" {
		d += "\n\n## Changes in " + v.Version + "\n\n" + c
	}
	return d + "\n"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func labels(p *Package) map[string]string {
	return map[string]string{"app.kubernetes.io/name": p.Name}
}

// installModes lists the four OLM install modes, the supported ones marked.
func installModes(supported []string) []opv1alpha1.InstallMode {
	var out []opv1alpha1.InstallMode
	for _, t := range []opv1alpha1.InstallModeType{
		opv1alpha1.InstallModeTypeOwnNamespace, opv1alpha1.InstallModeTypeSingleNamespace,
		opv1alpha1.InstallModeTypeMultiNamespace, opv1alpha1.InstallModeTypeAllNamespaces,
	} {
		out = append(out, opv1alpha1.InstallMode{Type: t, Supported: contains(supported, string(t))})
	}
	return out
}

// ownedCRDs describes every served version of every CRD.
func ownedCRDs(crds []*apiextv1.CustomResourceDefinition) []opv1alpha1.CRDDescription {
	var out []opv1alpha1.CRDDescription
	for _, crd := range crds {
		for _, ver := range crd.Spec.Versions {
			if !ver.Served {
				continue
			}
			d := opv1alpha1.CRDDescription{
				Name: crd.Name, Version: ver.Name, Kind: crd.Spec.Names.Kind, DisplayName: crd.Spec.Names.Kind,
			}
			if ver.Schema != nil && ver.Schema.OpenAPIV3Schema != nil {
				d.Description = firstLine(ver.Schema.OpenAPIV3Schema.Description)
			}
			out = append(out, d)
		}
	}
	return out
}

func requiredCRDs(req []RequiredCRD) []opv1alpha1.CRDDescription {
	var out []opv1alpha1.CRDDescription
	for _, r := range req {
		out = append(out, opv1alpha1.CRDDescription{
			Name: r.Name, Version: r.Version, Kind: r.Kind, DisplayName: r.Kind, Description: r.Description,
		})
	}
	return out
}

func strategyPermissions(sa string, rules []rbacv1.PolicyRule) []opv1alpha1.StrategyDeploymentPermissions {
	if len(rules) == 0 {
		return nil
	}
	return []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: rules}}
}

// deployment is the operator's Deployment: one replica, non-root, probes on the probe port.
func deployment(p *Package, v Version) appsv1.DeploymentSpec {
	return appsv1.DeploymentSpec{
		Replicas:                ptr.To[int32](1),
		ProgressDeadlineSeconds: v.ProgressDeadlineSeconds,
		Selector:                &metav1.LabelSelector{MatchLabels: labels(p)},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      labels(p),
				Annotations: map[string]string{"kubectl.kubernetes.io/default-container": containerName},
			},
			Spec: corev1.PodSpec{
				ServiceAccountName:            p.Name,
				TerminationGracePeriodSeconds: ptr.To[int64](10),
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{container(p, v)},
			},
		},
	}
}

func container(p *Package, v Version) corev1.Container {
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path},
		}}
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromInt32(p.ProbePort),
			}},
			InitialDelaySeconds: 5, PeriodSeconds: period,
		}
	}
	c := corev1.Container{
		Name:            containerName,
		Image:           p.ImageFor(v),
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            v.Args,
		Env:             []corev1.EnvVar{fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("POD_NAME", "metadata.name")},
		Ports:           []corev1.ContainerPort{{Name: "probes", ContainerPort: p.ProbePort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  probe("/readyz", 10),
		LivenessProbe:   probe("/healthz", 20),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("10m"), corev1.ResourceMemory: mustQuantity("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: mustQuantity("256Mi")},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](nonRootUID),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if p.MetricsPort != 0 {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: p.MetricsPort, Protocol: corev1.ProtocolTCP})
	}
	if v.LogsOnError {
		c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	return c
}

// checkRules refuses wildcards: the bundles grant least privilege.
func checkRules(file string, rules []rbacv1.PolicyRule) error {
	for i, r := range rules {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
			if contains(field, "*") {
				return fmt.Errorf("%s: rules[%d]: wildcard \"*\" not allowed (least privilege): %s", file, i, r.String())
			}
		}
	}
	return nil
}
