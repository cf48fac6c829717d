package main

// ALM's RBAC: `make manifests` generates config/rbac/role.yaml (ClusterRole alm-manager, and Role alm-manager in
// alm-system for leader election) from the markers below. Every rule is here because a loop makes that request;
// nothing is granted on `*` (config/rbac/role_test.go checks it, and that every kind a bundle may contain is
// covered). README "Least privilege" explains the choices.
//
// ALM's own API (operators.alm.dev). The catalogsource loop reads CatalogSources and writes their status; the
// apptype loop reads AppTypes, writes their status and creates OperatorVersions; the crd loop creates AppTypes for
// CRDs needed elsewhere; the upgradetrigger loop creates the next OperatorVersion; install and upgrade write
// OperatorVersions' status and add the cleanup finalizer, gc removes it and deletes replaced versions. The
// finalizers subresources let ALM set ownerReferences that block their owner's deletion where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=operators.alm.dev,resources=catalogsources;apptypes;operatorversions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=operators.alm.dev,resources=catalogsources/status;apptypes/status;operatorversions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=operators.alm.dev,resources=apptypes/finalizers;operatorversions/finalizers,verbs=update
//
// CRDs. The requirements loop creates the CRDs a version requires; the installer creates and updates the CRDs a
// bundle owns and reads required ones; the crd loop watches them; gc and upgrade release them (update). ALM never
// deletes a CRD, so it has no delete.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;update;patch
//
// What a bundle installs (policy.InstallableKinds, plus the install strategy's Deployments): the installer
// creates, reads and updates them, install/upgrade/gc find what a version owns by label (list), upgrade hands them
// over (update) or removes them (delete), gc deletes a removed version's cluster-scoped objects, and the loops watch
// Deployments' rollout. VerticalPodAutoscaler, ServiceMonitor and PrometheusRule are optional: their CRDs may be
// absent, and then the rules simply match nothing.
// +kubebuilder:rbac:groups="",resources=services;configmaps;secrets;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors;prometheusrules,verbs=get;list;watch;create;update;patch;delete
//
// RBAC a bundle declares (install strategy permissions and clusterPermissions, and Role/ClusterRole/binding objects).
// Kubernetes lets a subject create a role only with permissions it holds itself, and bind a role only if it holds
// the role's permissions, unless it has `escalate` on roles and clusterroles (to write them) and `bind` on them (to
// reference them from bindings). Bundles grant what their operator needs, which ALM cannot know in advance (short of
// holding everything, i.e. cluster-admin), so ALM holds escalate and bind. This makes ALM's ServiceAccount as
// powerful as cluster-admin in effect: only ALM's ServiceAccount is bound to this role, and the installer policy
// (controllers/internal/installer/policy.go) refuses wildcard and escalating rules, bindings to privileged roles and
// aggregated ClusterRoles unless a cluster admin opts in. The crdaccess loop uses the same verbs to maintain ClusterRole alm-manager-custom-resources: list on
// exactly the custom resources of the CRDs the OperatorVersions ship, which the installer reads to check a CRD
// update (RBAC cannot say "every custom resource" without `*`); config/rbac binds it to ALM's ServiceAccount.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings;clusterroles;clusterrolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;clusterroles,verbs=escalate;bind
//
// Tenancy (README "Trust model"): before applying anything for an OperatorVersion that names a ServiceAccount, the
// installer asks the API server's authorizer, with SubjectAccessReviews, whether that ServiceAccount may create the
// version's objects and grant its rules; for a version without one it reads the namespace's
// operators.alm.dev/trusted-installs label, from a cache of the namespaces that carry it (list and watch filtered by
// that label; get for a ServiceAccount-named version's checks).
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
//
// Metrics (--metrics-secure, the default; internal/metricsendpoint): /metrics answers only a caller the API server
// authenticates and authorizes for get on the non-resource URL /metrics (ClusterRole alm-metrics-reader), so ALM
// asks it with a TokenReview of the caller's bearer token and a SubjectAccessReview (granted above).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
//
// Pods: when an installing version's Deployment is not available, install and upgrade read its pods (get, list;
// never cached, no watch) to say why at once in the Ready condition: an image that cannot be pulled, a crash with
// its exit code and last log lines, a pod no node can run.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list
//
// Events: every loop records Events on the objects it works on, in their namespaces (the events.k8s.io API of
// client-go's event recorder; the core API for older recorders).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
//
// Leader election (--leader-elect): the Lease in ALM's namespace. A Role in alm-system, not cluster-wide.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=alm-system,resources=leases,verbs=get;list;watch;create;update;patch;delete
