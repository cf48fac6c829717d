package scale

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ObjectsPerBundle is how many objects one bundle of the scale catalog installs: a Deployment, its ServiceAccount, a
// Role and RoleBinding, a ClusterRole and ClusterRoleBinding, and a ConfigMap.
const ObjectsPerBundle = 7

// bundleVersion is the version each package of the scale catalog starts with; upgradeVersion the one
// PublishUpgrade ships, replacing it.
const (
	bundleVersion  = "1.0.0"
	upgradeVersion = "2.0.0"
)

// PackageName is the name of the i-th package of the scale catalog.
func PackageName(i int) string { return fmt.Sprintf("scale-%02d", i) }

// WriteCatalog writes n registry+v1 bundles, one per package, as operator-sdk lays them out, under dir
// (dir/<package>/<version>): the directory a CatalogSource of type directory serves.
func WriteCatalog(dir string, n int) error {
	for i := 0; i < n; i++ {
		if err := writeBundle(filepath.Join(dir, PackageName(i), bundleVersion), PackageName(i), bundleVersion); err != nil {
			return err
		}
	}
	return nil
}

// PublishUpgrade adds to the catalog under dir, for each of its n packages, version 2.0.0 replacing 1.0.0: its
// Deployment changed (image and an environment variable), its ConfigMap <package>-config gone and a ConfigMap
// <package>-settings added, the other five objects the same. The new bundles are written aside and renamed into
// place, so a catalog read sees each one whole or not at all.
func PublishUpgrade(dir string, n int) error {
	for i := 0; i < n; i++ {
		pkg := PackageName(i)
		tmp := filepath.Join(dir, "."+pkg+"-"+upgradeVersion)
		if err := writeBundle(tmp, pkg, upgradeVersion); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, pkg, upgradeVersion)); err != nil {
			return err
		}
	}
	return nil
}

// configMapName is the name of the ConfigMap a version of pkg ships (upgrades replace it by another).
func configMapName(pkg, v string) string {
	if v == bundleVersion {
		return pkg + "-config"
	}
	return pkg + "-settings"
}

func writeBundle(dir, pkg, v string) error {
	for _, sub := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	files := map[string]any{
		filepath.Join("manifests", pkg+".clusterserviceversion.yaml"): csv(pkg, v),
		filepath.Join("manifests", "configmap-"+configMapName(pkg, v)+".yaml"): map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": configMapName(pkg, v)},
			"data": map[string]any{"version": v, "log-level": "info"},
		},
		filepath.Join("metadata", "annotations.yaml"): map[string]any{"annotations": map[string]string{
			"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
			"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
			"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
			"operators.operatorframework.io.bundle.package.v1":         pkg,
			"operators.operatorframework.io.bundle.channels.v1":        "stable",
			"operators.operatorframework.io.bundle.channel.default.v1": "stable",
		}},
	}
	for name, content := range files {
		data, err := yaml.Marshal(content)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// csv is the bundle's ClusterServiceVersion: one Deployment running as a ServiceAccount with namespaced and
// cluster permissions, like most operators. The upgrade version replaces the first, with another image and one
// more environment variable.
func csv(pkg, v string) *opv1alpha1.ClusterServiceVersion {
	sa := pkg + "-operator"
	labels := map[string]string{"app": pkg + "-operator"}
	deployment := appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: sa,
				Containers: []corev1.Container{{
					Name: "operator", Image: "alm.local/" + pkg + ":" + v,
					Args: []string{"--leader-elect", "--metrics-bind-address=:8080"},
					Env:  env(v),
				}},
			},
		},
	}
	var replaces string
	if v != bundleVersion {
		replaces = pkg + ".v" + bundleVersion
	}
	return &opv1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: pkg + ".v" + v},
		Spec: opv1alpha1.ClusterServiceVersionSpec{
			DisplayName: pkg,
			Description: "An operator of the scale catalog.",
			Version:     version.OperatorVersion{Version: semver.MustParse(v)},
			Replaces:    replaces,
			InstallStrategy: opv1alpha1.NamedInstallStrategy{
				StrategyName: opv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: opv1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []opv1alpha1.StrategyDeploymentSpec{{Name: pkg + "-operator", Spec: deployment}},
					Permissions: []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: []rbacv1.PolicyRule{
						{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
						{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
					}}},
					ClusterPermissions: []opv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: []rbacv1.PolicyRule{
						{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
					}}},
				},
			},
			InstallModes: []opv1alpha1.InstallMode{
				{Type: opv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: opv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: opv1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: opv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
		},
	}
}

// env is the operator container's environment in version v.
func env(v string) []corev1.EnvVar {
	out := []corev1.EnvVar{{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}
	if v != bundleVersion {
		out = append(out, corev1.EnvVar{Name: "FEATURES", Value: "upgraded"})
	}
	return out
}
