package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
)

// Demo describes a small operator version like the ones real bundles carry: one Deployment running as a
// ServiceAccount with namespaced and cluster permissions, an owned CRD, and a Service and ConfigMap.
type Demo struct {
	Namespace, Name, Package, Version, Replaces string
	// Image is the Deployment's image; it changes between versions.
	Image string
	// ExtraObjects are appended to spec.objects (e.g. a Service only this version ships).
	ExtraObjects []map[string]any
	// CRDVersions are the versions of the owned CRD widgets.<package>.example.com; default ["v1"].
	CRDVersions []string
	// RequiredCRDs are names of CRDs of kind Widget (as CRD makes them) listed as required.
	RequiredCRDs []string
	// SkipRange is the olm.skipRange of the version (bundles only).
	SkipRange string
	// Handoff is the CSV annotation operators.alm.dev/handoff ("true" or a timeout; bundles only).
	Handoff string
	// CRDGroup is the group of the owned CRD widgets.<group>; default <package>.example.com. Two packages with one
	// CRDGroup own the same CRD.
	CRDGroup string
	// Namespaced: the bundle has no CRD and no clusterPermissions, so a tenant holding permissions in its namespace
	// only may install it (ClusterRules still add clusterPermissions).
	Namespaced bool
	// ClusterRules are clusterPermissions of the operator's ServiceAccount, instead of * on its widgets.
	ClusterRules []rbacv1.PolicyRule
	// DependsOn are the packages the bundle depends on (metadata/dependencies.yaml, olm.package entries; bundles
	// only).
	DependsOn []operatorsv1alpha1.RequiredPackage
	// Webhooks are the version's webhookdefinitions; Args and Ports the operator container's args and ports.
	Webhooks []opv1alpha1.WebhookDescription
	Args     []string
	Ports    []corev1.ContainerPort
	// ReadinessProbe is the operator container's readiness probe.
	ReadinessProbe *corev1.Probe
	// NodeSelector is the operator pod's nodeSelector.
	NodeSelector map[string]string
	// LogsOnError sets the operator container's terminationMessagePolicy to FallbackToLogsOnError.
	LogsOnError bool
}

func terminationMessagePolicy(logsOnError bool) corev1.TerminationMessagePolicy {
	if logsOnError {
		return corev1.TerminationMessageFallbackToLogsOnError
	}
	return ""
}

// crdGroup is the group of d's owned CRD.
func (d Demo) crdGroup() string {
	if d.CRDGroup != "" {
		return d.CRDGroup
	}
	return d.Package + ".example.com"
}

// OperatorVersion builds the OperatorVersion d describes, with spec.bundle recording the digest of its content (a
// test that edits the content afterwards calls WithContentDigest again).
func (d Demo) OperatorVersion() *operatorsv1alpha1.OperatorVersion {
	if d.Package == "" {
		d.Package = "demo"
	}
	if d.Image == "" {
		d.Image = "alm.local/" + d.Package + ":" + d.Version
	}
	sa := d.Package + "-operator"
	labels := map[string]string{"app": d.Package + "-operator"}
	deployment := appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: sa,
				NodeSelector:       d.NodeSelector,
				Containers: []corev1.Container{{Name: "operator", Image: d.Image, Args: d.Args, Ports: d.Ports, ReadinessProbe: d.ReadinessProbe,
					TerminationMessagePolicy: terminationMessagePolicy(d.LogsOnError)}},
			},
		},
	}
	crdName := "widgets." + d.crdGroup()
	objects := []map[string]any{
		CRD(d.crdGroup(), "Widget", "widgets", d.CRDVersions...),
		{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": d.Package + "-metrics"},
			"spec": map[string]any{"selector": labels, "ports": []any{map[string]any{"port": int64(8080)}}}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": d.Package + "-config"},
			"data": map[string]any{"version": d.Version}},
	}
	clusterRules := []rbacv1.PolicyRule{{APIGroups: []string{d.crdGroup()}, Resources: []string{"widgets"}, Verbs: []string{"*"}}}
	owned := []opv1alpha1.CRDDescription{{Name: crdName, Version: "v1", Kind: "Widget"}}
	if d.Namespaced {
		objects, clusterRules, owned = objects[1:], nil, nil
	}
	if d.ClusterRules != nil {
		clusterRules = d.ClusterRules
	}
	var clusterPermissions []opv1alpha1.StrategyDeploymentPermissions
	if clusterRules != nil {
		clusterPermissions = []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: clusterRules}}
	}
	objects = append(objects, d.ExtraObjects...)
	raw := make([]runtime.RawExtension, 0, len(objects))
	for _, o := range objects {
		data, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		raw = append(raw, runtime.RawExtension{Raw: data})
	}
	var required []opv1alpha1.CRDDescription
	for _, name := range d.RequiredCRDs {
		required = append(required, opv1alpha1.CRDDescription{Name: name, Version: "v1", Kind: "Widget"})
	}
	ov := &operatorsv1alpha1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name},
		Spec: operatorsv1alpha1.OperatorVersionSpec{
			PackageName: d.Package,
			Version:     version.OperatorVersion{Version: semver.MustParse(d.Version)},
			Replaces:    d.Replaces,
			CustomResourceDefinitions: opv1alpha1.CustomResourceDefinitions{
				Owned:    owned,
				Required: required,
			},
			Install: opv1alpha1.NamedInstallStrategy{
				StrategyName: opv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: opv1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []opv1alpha1.StrategyDeploymentSpec{{Name: d.Package + "-operator", Spec: deployment}},
					Permissions: []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: []rbacv1.PolicyRule{
						{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
					}}},
					ClusterPermissions: clusterPermissions,
				},
			},
			Objects:            raw,
			WebhookDefinitions: d.Webhooks,
		},
	}
	return recordDigest(ov)
}

// recordDigest sets ov's spec.bundle to the digest of its content in spec, as the catalog loops record it: the
// lifecycle loops apply no content without a digest to verify it against.
func recordDigest(ov *operatorsv1alpha1.OperatorVersion) *operatorsv1alpha1.OperatorVersion {
	digest, err := bundle.ContentDigest(&ov.Spec)
	if err != nil {
		panic(err)
	}
	ov.Spec.Bundle = &operatorsv1alpha1.BundleReference{Digest: digest}
	return ov
}

// CRD is a namespaced CRD manifest <plural>.<group> with the given versions (the first is the storage version),
// each with a schema whose spec has a string field "size".
func CRD(group, kind, plural string, versions ...string) map[string]any {
	if len(versions) == 0 {
		versions = []string{"v1"}
	}
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{
			"name": v, "served": true, "storage": i == 0,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "string"}}},
				},
			}},
		})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": fmt.Sprintf("%s.%s", plural, group)},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced", "versions": vs,
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
		},
	}
}

// SharedObjects are the objects every version of a namespaced Demo of pkg declares, keyed by kind.
func SharedObjects(ns, pkg string) map[string]client.Object {
	return map[string]client.Object{
		"Deployment":     &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		"ServiceAccount": &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-operator"}},
		"Service":        &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-metrics"}},
		"ConfigMap":      &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pkg + "-config"}},
	}
}

// ObjectUIDs reads objs and returns their UIDs by the same keys.
func ObjectUIDs(t *testing.T, c client.Client, objs map[string]client.Object) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for k, obj := range objs {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = obj.GetUID()
	}
	return out
}

// AssertSameUIDs fails t for every object of before whose UID changed in after (it was re-created).
func AssertSameUIDs(t *testing.T, what string, before, after map[string]types.UID) {
	t.Helper()
	for k, uid := range before {
		if after[k] != uid {
			t.Errorf("%s: %s was re-created (UID %s -> %s)", what, k, uid, after[k])
		}
	}
}

// OVGone says whether the OperatorVersion ns/name does not exist.
func OVGone(t *testing.T, c client.Client, ns, name string) bool {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &operatorsv1alpha1.OperatorVersion{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}
