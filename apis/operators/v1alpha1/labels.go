package v1alpha1

// Labels that ALM puts on every object it creates for an OperatorVersion. Loops find what an OperatorVersion owns
// with a label query on them; namespaced objects also carry an ownerReference.
const (
	// LabelOwner names the OperatorVersion that owns the object.
	LabelOwner = "operators.alm.dev/owner"
	// LabelOwnerNamespace is the namespace of that OperatorVersion.
	LabelOwnerNamespace = "operators.alm.dev/owner-namespace"
	// LabelAppType is the package (AppType) the owning OperatorVersion belongs to.
	LabelAppType = "operators.alm.dev/app-type"
	// LabelCatalog marks a ConfigMap that holds a bundle of the named CatalogSource (see `almctl publish`).
	LabelCatalog = "operators.alm.dev/catalog"
	// LabelTrustedInstalls on a namespace, set to "true", lets ALM install versions that name no ServiceAccount
	// there with its own permissions (when it runs with --trust-all-namespaces=false). Only cluster admins may be
	// able to set it: RBAC must not give tenants update or patch on their namespaces.
	LabelTrustedInstalls = "operators.alm.dev/trusted-installs"
)

// AnnotationAppliedHash on an object ALM applied records the hash of the content it applied, so that an object whose
// desired content did not change is not written again.
const AnnotationAppliedHash = "operators.alm.dev/applied-hash"
