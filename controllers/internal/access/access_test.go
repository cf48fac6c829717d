package access

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// authorizer answers SubjectAccessReviews: allowed when allow says so; it counts the reviews.
func authorizer(allow func(authorizationv1.SubjectAccessReviewSpec) bool, count *int) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	trusted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "trusted", Labels: map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "true"}}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{operatorsv1alpha1.LabelTrustedInstalls: "yes"}}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "sa"}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(trusted, other, sa).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if sar, ok := obj.(*authorizationv1.SubjectAccessReview); ok {
				*count++
				sar.Status.Allowed = allow(sar.Spec)
				return nil
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
}

func TestCheckTrustedNamespaces(t *testing.T) {
	var n int
	c := authorizer(func(authorizationv1.SubjectAccessReviewSpec) bool { return false }, &n)
	for _, tc := range []struct {
		policy    Policy
		namespace string
		refused   bool
	}{
		{Policy{TrustAllNamespaces: true}, "other", false},
		{Policy{Namespace: "alm-system"}, "alm-system", false},
		{Policy{Namespace: "alm-system"}, "trusted", false},
		{Policy{Namespace: "alm-system"}, "other", true}, // the label says "yes", not "true"
	} {
		checker := &Checker{Client: c, Reader: c, Policy: tc.policy}
		why, err := checker.Check(context.Background(), tc.namespace, "", nil, plural)
		if err != nil {
			t.Fatal(err)
		}
		if (why != "") != tc.refused || tc.refused && !strings.Contains(why, "kubectl label namespace other operators.alm.dev/trusted-installs=true") {
			t.Errorf("%+v in %s: refused %q, want refused %v", tc.policy, tc.namespace, why, tc.refused)
		}
	}
	if n != 0 {
		t.Errorf("%d SubjectAccessReviews for versions without a ServiceAccount, want 0", n)
	}
}

func TestCheckServiceAccount(t *testing.T) {
	role := obj("rbac.authorization.k8s.io/v1", "Role", "t", "r", map[string]any{"rules": []any{
		map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}})
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", "t", "r", map[string]any{
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}})
	objects := []*unstructured.Unstructured{role, binding, obj("v1", "ConfigMap", "t", "c", nil)}
	noSecrets := func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Resource != "secrets"
	}
	escalates := func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Verb == "escalate" || s.ResourceAttributes.Verb == "bind"
	}
	cases := []struct {
		name    string
		allow   func(authorizationv1.SubjectAccessReviewSpec) bool
		missing []string // lines the refusal lists; none: allowed
	}{
		{name: "holds everything", allow: func(authorizationv1.SubjectAccessReviewSpec) bool { return true }},
		{name: "lacks get secrets: the role and the binding need it, listed once", allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
			return !escalates(s) && noSecrets(s)
		}, missing: []string{"kubectl auth can-i get secrets -n t --as system:serviceaccount:t:sa   # Role t/r grants it (or escalate on roles)"}},
		{name: "lacks get secrets but holds escalate and bind", allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
			return escalates(s) || noSecrets(s)
		}},
		{name: "lacks update on ConfigMap c", allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
			return s.ResourceAttributes.Verb != "update" || s.ResourceAttributes.Resource != "configmaps"
		}, missing: []string{"kubectl auth can-i update configmaps/c -n t --as system:serviceaccount:t:sa"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			allow := tc.allow
			var n int
			c := authorizer(func(s authorizationv1.SubjectAccessReviewSpec) bool {
				if s.User != "system:serviceaccount:t:sa" || len(s.Groups) < 2 || s.Groups[1] != "system:serviceaccounts:t" {
					t.Errorf("review for %s %v", s.User, s.Groups)
				}
				return allow(s)
			}, &n)
			why, err := (&Checker{Client: c, Reader: c}).Check(context.Background(), "t", "sa", objects, plural)
			if err != nil {
				t.Fatal(err)
			}
			if (why == "") != (len(tc.missing) == 0) {
				t.Fatalf("refusal %q, want missing %v", why, tc.missing)
			}
			for _, m := range tc.missing {
				if strings.Count(why, m) != 1 {
					t.Errorf("refusal lists %q %d times, want once:\n%s", m, strings.Count(why, m), why)
				}
			}
			if n > 10 {
				t.Errorf("%d SubjectAccessReviews; identical ones must be asked once", n)
			}
		})
	}
}

// TestCheckMissingServiceAccount: a version that names a ServiceAccount that does not exist is refused before any
// review (a binding may name a missing ServiceAccount, so the reviews could allow it), with how to fix it.
func TestCheckMissingServiceAccount(t *testing.T) {
	var n int
	c := authorizer(func(authorizationv1.SubjectAccessReviewSpec) bool { return true }, &n)
	why, err := (&Checker{Client: c, Reader: c}).Check(context.Background(), "t", "missing", []*unstructured.Unstructured{obj("v1", "ConfigMap", "t", "c", nil)}, plural)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ServiceAccount t/missing (spec.serviceAccountName) does not exist", "kubectl create serviceaccount missing -n t"} {
		if !strings.Contains(why, want) {
			t.Errorf("refusal %q does not say %q", why, want)
		}
	}
	if n != 0 {
		t.Errorf("%d SubjectAccessReviews for a missing ServiceAccount, want 0", n)
	}
}
