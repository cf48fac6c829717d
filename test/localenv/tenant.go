package localenv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The tenant of the story: a team with a namespace a cluster admin did not trust, and a ServiceAccount the admin
// granted what the team may do there.
const (
	// TenantNamespace is the team's namespace; it has no operators.alm.dev/trusted-installs label.
	TenantNamespace = "team-a"
	// TenantServiceAccount is the ServiceAccount the team's AppType names (spec.serviceAccountName).
	TenantServiceAccount = "installer"
	// TenantPackage is what the team installs: gateway-config, a namespaced operator (OwnNamespace, permissions only
	// in its namespace).
	TenantPackage = "gateway-config"
	// TenantVersion is the version of TenantPackage the story publishes.
	TenantVersion = "0.1.0"
)

// TenantRules are what the cluster admin grants TenantServiceAccount in TenantNamespace: the kinds a namespaced
// bundle installs, and the permissions gateway-config's own Role grants (Kubernetes lets a Role be written only by
// someone who holds what it grants).
var TenantRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps", "serviceaccounts", "services"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"configuration.konghq.com"}, Resources: []string{"kongservices"}, Verbs: []string{"get", "list", "watch"}},
}

// InstallAsTenant publishes gateway-config and installs it as a team would in a namespace a cluster admin did not
// trust: the AppType names the team's ServiceAccount, and ALM installs only what that ServiceAccount could create
// and grant itself. It returns what the step shows.
func (s *Story) InstallAsTenant(ctx context.Context) (string, error) {
	if _, err := s.Publish(ctx, s.Env.Path("bundles", TenantPackage, TenantVersion)); err != nil {
		return "", err
	}
	if err := s.EnsureNamespace(ctx, TenantNamespace); err != nil {
		return "", err
	}
	meta := metav1.ObjectMeta{Namespace: TenantNamespace, Name: TenantServiceAccount}
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.Role{ObjectMeta: meta, Rules: TenantRules},
		&rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: meta.Namespace, Name: meta.Name}}},
		&operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: TenantNamespace, Name: TenantPackage},
			Spec: operatorsv1alpha1.AppTypeSpec{Package: TenantPackage, ServiceAccountName: TenantServiceAccount}},
	} {
		if err := s.Env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("creating %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	ov, err := s.WaitInstalled(ctx, TenantNamespace, TenantPackage, TenantVersion)
	if err != nil {
		return "", err
	}
	if err := s.Env.WaitDeploymentAvailable(ctx, TenantNamespace, TenantPackage, s.Timeout); err != nil {
		return "", err
	}
	return fmt.Sprintf("OperatorVersion %s %s in %s (not a trusted namespace), installed as ServiceAccount %s/%s (spec.serviceAccountName): "+
		"ALM checked every object it applied and every permission it granted against that ServiceAccount first", ov.Name, ov.Status.Phase,
		TenantNamespace, TenantNamespace, TenantServiceAccount), nil
}
