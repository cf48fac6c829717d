// Package access decides whether an install may go ahead for the identity it acts for: an OperatorVersion that
// names a ServiceAccount installs only what that ServiceAccount could create and grant itself, asked of the API
// server's authorizer with SubjectAccessReviews (Kubernetes' RBAC escalation rules: hold a permission to grant it, or
// escalate/bind on roles; hold every permission to write an aggregationRule; rules broken down by Kubernetes' own
// comparator, validation.BreakdownRule); one that names none installs with ALM's permissions only in a namespace a cluster admin
// trusts. What to ask is a pure function (Needs); the reviews are the only API calls, and nothing is cached across
// checks.
package access

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// MaxReviews bounds the SubjectAccessReviews of one check; a version that needs more is refused (its message says
// so): no bundle needs that many distinct permissions.
const MaxReviews = 400

// Policy says where a version without a ServiceAccount may be installed with ALM's own permissions.
type Policy struct {
	// TrustAllNamespaces: everywhere (ALM's behaviour before tenancy; a cluster with one tenant, its admins).
	TrustAllNamespaces bool
	// Namespace is ALM's own namespace, always trusted.
	Namespace string
}

// Trusted says whether ALM acts with its own permissions in namespace: every namespace with TrustAllNamespaces,
// else ALM's namespace and namespaces labelled operators.alm.dev/trusted-installs=true, read from r (the manager's
// cache, which may hold only the labelled namespaces: one it does not hold is not trusted).
func (p Policy) Trusted(ctx context.Context, r client.Reader, namespace string) (bool, error) {
	if p.TrustAllNamespaces || namespace == p.Namespace {
		return true, nil
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, ns); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("reading Namespace %s for label %s: %w", namespace, operatorsv1alpha1.LabelTrustedInstalls, err)
	}
	return ns.Labels[operatorsv1alpha1.LabelTrustedInstalls] == "true", nil
}

// Checker runs the checks of one install.
type Checker struct {
	// Client creates SubjectAccessReviews.
	Client client.Client
	// Reader reads ServiceAccounts, from the API server.
	Reader client.Reader
	// Namespaces reads Namespaces (their operatorsv1alpha1.LabelTrustedInstalls): the manager's cache; nil: Reader.
	Namespaces client.Reader
	// Policy is where ALM installs with its own permissions.
	Policy Policy
}

// Resource maps a kind to its resource name (plural) for an access review.
type Resource func(gvk schema.GroupVersionKind) (string, error)

// Check says why the install of objects for a version in namespace, acting as ServiceAccount serviceAccount of
// that namespace ("" for ALM itself), is refused; "" when it may go ahead. The reason lists every missing permission
// as a `kubectl auth can-i` line.
func (c *Checker) Check(ctx context.Context, namespace, serviceAccount string, objects []*unstructured.Unstructured, resource Resource) (string, error) {
	if serviceAccount == "" {
		return c.checkTrusted(ctx, namespace)
	}
	if why, err := c.checkServiceAccount(ctx, namespace, serviceAccount); why != "" || err != nil {
		return why, err
	}
	needs, err := Needs(objects, resource)
	if err != nil {
		return "", err
	}
	user := "system:serviceaccount:" + namespace + ":" + serviceAccount
	reviews := &reviewer{client: c.Client, user: user, namespace: namespace, answers: map[Request]bool{}}
	var missing []string
	why := map[string]string{} // kubectl line -> the first object that needs it
	for _, n := range needs {
		lines, err := reviews.unmet(ctx, n)
		if err != nil {
			return "", err
		}
		for _, l := range lines {
			if _, seen := why[l[0]]; !seen {
				why[l[0]] = l[1]
				missing = append(missing, l[0]+"   # "+l[1])
			}
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("ServiceAccount %s/%s (spec.serviceAccountName) lacks %d permissions this version needs; nothing was "+
		"applied. Grant them, and ALM retries. Missing:\n%s", namespace, serviceAccount, len(missing), strings.Join(missing, "\n")), nil
}

// checkTrusted says why ALM may not install with its own permissions in namespace; "" when it may.
func (c *Checker) checkTrusted(ctx context.Context, namespace string) (string, error) {
	namespaces := c.Namespaces
	if namespaces == nil {
		namespaces = c.Reader
	}
	trusted, err := c.Policy.Trusted(ctx, namespaces, namespace)
	if trusted || err != nil {
		return "", err
	}
	return fmt.Sprintf("namespace %s is not trusted for installs with ALM's own permissions, and the version names no "+
		"ServiceAccount; nothing was applied. Either set spec.serviceAccountName on the AppType to a ServiceAccount "+
		"in %s that holds the permissions the bundle needs (a new version is created with it), or a cluster admin "+
		"trusts the namespace: kubectl label namespace %s %s=true (ALM retries)",
		namespace, namespace, namespace, operatorsv1alpha1.LabelTrustedInstalls), nil
}

// checkServiceAccount says why the ServiceAccount a version names cannot act for it ("" when it can): it must
// exist. Bindings may name a ServiceAccount that does not exist (yet), so the reviews alone would not say so.
func (c *Checker) checkServiceAccount(ctx context.Context, namespace, name string) (string, error) {
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ServiceAccount{})
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("ServiceAccount %s/%s (spec.serviceAccountName) does not exist; nothing was applied. Create it "+
			"and grant it the permissions the bundle needs (kubectl create serviceaccount %s -n %s), or correct the "+
			"AppType's spec.serviceAccountName; ALM retries", namespace, name, name, namespace), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading ServiceAccount %s/%s (spec.serviceAccountName): %w", namespace, name, err)
	}
	return "", nil
}

// reviewer asks the authorizer whether user may make requests, each distinct request once per check.
type reviewer struct {
	client          client.Client
	user, namespace string
	answers         map[Request]bool
}

// unmet returns the kubectl auth can-i lines of the requests of n that are not allowed, each with what needs it;
// none when n's Alternative is allowed or every request is.
func (r *reviewer) unmet(ctx context.Context, n Need) ([][2]string, error) {
	if n.Alternative != nil {
		ok, err := r.allowed(ctx, *n.Alternative)
		if err != nil || ok {
			return nil, err
		}
	}
	var out [][2]string
	for _, req := range n.Requests {
		ok, err := r.allowed(ctx, req)
		if err != nil {
			return nil, err
		}
		if !ok {
			reason := n.For
			if n.Alternative != nil {
				reason += " (or " + n.Alternative.Verb + " on " + n.Alternative.Resource + ")"
			}
			out = append(out, [2]string{req.CanI(r.user), reason})
		}
	}
	return out, nil
}

// allowed asks one SubjectAccessReview, unless this check asked it already.
func (r *reviewer) allowed(ctx context.Context, req Request) (bool, error) {
	if ok, asked := r.answers[req]; asked {
		return ok, nil
	}
	if len(r.answers) >= MaxReviews {
		return false, fmt.Errorf("checking the permissions of %s: more than %d distinct SubjectAccessReviews", r.user, MaxReviews)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   r.user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + r.namespace, "system:authenticated"},
	}}
	if req.Path != "" {
		sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: req.Path, Verb: req.Verb}
	} else {
		sar.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: req.Namespace, Verb: req.Verb,
			Group: req.Group, Resource: req.Resource, Subresource: req.Subresource, Name: req.Name}
	}
	if err := r.client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("SubjectAccessReview for %s: %s: %w", r.user, req.CanI(r.user), err)
	}
	r.answers[req] = sar.Status.Allowed
	return sar.Status.Allowed, nil
}
