// Package konnect is the Konnect operator: it keeps Kong Konnect in the state declared by Kubernetes objects
// (KonnectAPIAuthConfiguration, KonnectGatewayControlPlane, KongService, KongRoute, KongConsumer, KongConsumerGroup,
// KongPluginBinding with its KongPlugin, KongUpstream and KongTarget, KongCertificate, KongCACertificate, KongSNI and
// KongDataPlaneClientCertificate, KongKey and KongKeySet, KongVault). Setup wires its
// parts: the loop of auth configurations (authconfig), the one generic loop of every entity kind (entity, the seed
// konnect-reconciliation-loop.md) with the kinds it syncs (kinds), and the Konnect client (konnectapi).
package konnect

import (
	"context"
	"errors"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	configurationv1beta1 "github.com/almproject/alm/apis/configuration/v1beta1"
	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/grants"
	"github.com/almproject/alm/controllers/konnect/handoff"
	"github.com/almproject/alm/controllers/konnect/kinds"
	"github.com/almproject/alm/controllers/konnect/kinds/cloudgateway"
	"github.com/almproject/alm/controllers/konnect/kinds/credentials"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/controllers/konnect/pluginannotation"
	"github.com/almproject/alm/controllers/konnect/retag"
	"github.com/almproject/alm/internal/outage"
)

// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectapiauthconfigurations;konnectgatewaycontrolplanes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectapiauthconfigurations/status;konnectgatewaycontrolplanes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectgatewaycontrolplanes/finalizers;konnectapiauthconfigurations/finalizers,verbs=update
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices;kongroutes;kongconsumers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices/status;kongroutes/status;kongconsumers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongservices/finalizers;kongroutes/finalizers;kongconsumers/finalizers,verbs=update
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongconsumergroups;kongpluginbindings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongconsumergroups/status;kongpluginbindings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongconsumergroups/finalizers;kongpluginbindings/finalizers,verbs=update
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongpluginbindings,verbs=create;delete
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongplugins,verbs=get;list;watch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongreferencegrants,verbs=get;list;watch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongupstreams;kongtargets;kongcertificates;kongcacertificates;kongsnis;kongdataplaneclientcertificates;kongkeys;kongkeysets;kongvaults,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongupstreams/status;kongtargets/status;kongcertificates/status;kongcacertificates/status;kongsnis/status;kongdataplaneclientcertificates/status;kongkeys/status;kongkeysets/status;kongvaults/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongupstreams/finalizers;kongtargets/finalizers;kongcertificates/finalizers;kongcacertificates/finalizers;kongsnis/finalizers;kongdataplaneclientcertificates/finalizers;kongkeys/finalizers;kongkeysets/finalizers;kongvaults/finalizers,verbs=update
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongcredentialapikeys;kongcredentialbasicauths;kongcredentialacls;kongcredentialjwts;kongcredentialhmacs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongcredentialapikeys/status;kongcredentialbasicauths/status;kongcredentialacls/status;kongcredentialjwts/status;kongcredentialhmacs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=configuration.konghq.com,resources=kongcredentialapikeys/finalizers;kongcredentialbasicauths/finalizers;kongcredentialacls/finalizers;kongcredentialjwts/finalizers;kongcredentialhmacs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Options configure the operator's loops.
type Options struct {
	// SyncPeriod is how long an unchanged object waits before Konnect is brought back to its declared state.
	SyncPeriod time.Duration
	// DriftMode: entity.DriftModeList (default) or entity.DriftModeUpdate.
	DriftMode entity.DriftMode
	// RateLimit is the most requests per second sent to one Konnect organization; <= 0 is unlimited.
	RateLimit float64
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// Clients overrides the Konnect client factory (tests); nil uses sdk-konnect-go.
	Clients konnectapi.ClientFactory
	// PartReads is the budget of periodic part checks per control plane, kind and sync period (default
	// entity.DefaultPartReads; see entity.Options.PartReads).
	PartReads int
	// TagScheme is the identity tags the entities get (default entity.TagSchemeV1).
	TagScheme entity.TagScheme
	// Handoff, when set, is the OperatorVersion this operator runs as under ALM (handoff.TargetFromEnv): when ALM
	// asks it to take over from the version it replaces, it re-tags every entity to TagScheme and answers.
	Handoff *handoff.Target
	// CloudGatewayPoll is how soon a Dedicated Cloud Gateway network being provisioned is read again (default
	// cloudgateway.DefaultPoll).
	CloudGatewayPoll time.Duration
}

// defaultSyncPeriod is the seed's: an unchanged object is brought back to its declared state once a minute.
const defaultSyncPeriod = time.Minute

// defaultWorkers is how many objects of one kind are reconciled at once.
const defaultWorkers = 8

// withDefaults fills what opts leaves unset and checks the drift mode.
func (opts Options) withDefaults(mgr manager.Manager) (Options, error) {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = defaultSyncPeriod
	}
	if opts.DriftMode == "" {
		opts.DriftMode = entity.DriftModeList
	}
	if opts.DriftMode != entity.DriftModeList && opts.DriftMode != entity.DriftModeUpdate {
		return opts, fmt.Errorf("unknown drift mode %q (want %s or %s)", opts.DriftMode, entity.DriftModeList, entity.DriftModeUpdate)
	}
	if opts.PartReads <= 0 {
		opts.PartReads = entity.DefaultPartReads
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = defaultWorkers
	}
	if opts.Clients == nil {
		opts.Clients = konnectapi.NewClientFactory(mgr.GetClient(), opts.RateLimit)
	}
	return opts, nil
}

// Setup registers the field indexes and every loop of the operator with mgr.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) error {
	opts, err := opts.withDefaults(mgr)
	if err != nil {
		return err
	}
	ctrlOpts := controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: retryLimiter(opts.SyncPeriod)}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &konnectv1alpha2.KonnectGatewayControlPlane{}, kinds.IndexControlPlaneID, func(o client.Object) []string {
		if id := o.(*konnectv1alpha2.KonnectGatewayControlPlane).Status.ID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	auth := &authconfig.Reconciler{Client: mgr.GetClient(), Clients: opts.Clients, Recorder: mgr.GetEventRecorder("konnect-operator"), SyncPeriod: opts.SyncPeriod}
	if err := auth.SetupWithManager(ctx, mgr, ctrlOpts); err != nil {
		return err
	}
	kindOpts := entity.Options{Clients: opts.Clients, SyncPeriod: opts.SyncPeriod, Mode: opts.DriftMode, TagScheme: opts.TagScheme, Controller: ctrlOpts,
		PartReads: opts.PartReads}
	if err := setupHandoff(mgr, opts); err != nil {
		return err
	}
	installed, err := optionalKinds(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	if installed.grants {
		kindOpts.FollowAll = []entity.FollowAll{grantsFollow()}
	} else {
		mgr.GetLogger().WithName("setup").Info("the KongReferenceGrant CRD is not installed: references into other namespaces are refused")
	}
	if err := entity.Setup(ctx, mgr, kinds.ControlPlane(), kindOpts); err != nil {
		return err
	}
	if err := entity.Setup(ctx, mgr, kinds.Service(installed.gateway), kindOpts); err != nil {
		return err
	}
	if err := entity.Setup(ctx, mgr, kinds.Route(), kindOpts); err != nil {
		return err
	}
	if err := entity.Setup(ctx, mgr, kinds.Consumer(installed.consumerGroups), kindOpts); err != nil {
		return err
	}
	if installed.cloudGateways {
		cloud := cloudgateway.Options{Clients: opts.Clients, SyncPeriod: opts.SyncPeriod, Poll: opts.CloudGatewayPoll, Controller: ctrlOpts}
		if err := cloudgateway.Setup(ctx, mgr, cloud); err != nil {
			return err
		}
	}
	return setupOptional(ctx, mgr, installed, kindOpts)
}

// setupOptional registers the loops of the kinds added after the first bundles, when their CRDs are installed.
func setupOptional(ctx context.Context, mgr manager.Manager, installed installedKinds, kindOpts entity.Options) error {
	log := mgr.GetLogger().WithName("setup")
	if !installed.consumerGroups {
		log.Info("the KongConsumerGroup CRD is not installed: consumer groups are not synced")
		return nil
	}
	if err := entity.Setup(ctx, mgr, kinds.ConsumerGroup(), kindOpts); err != nil {
		return err
	}
	if err := setupGatewayKinds(ctx, mgr, installed, kindOpts); err != nil {
		return err
	}
	if err := setupCredentialKinds(ctx, mgr, installed, kindOpts); err != nil {
		return err
	}
	if !installed.plugins {
		log.Info("the KongPlugin and KongPluginBinding CRDs are not installed: plugins are not synced")
		return nil
	}
	if err := entity.Setup(ctx, mgr, kinds.PluginBinding(), kindOpts); err != nil {
		return err
	}
	return pluginannotation.Setup(mgr, kindOpts.Controller)
}

// installedKinds says which of the kinds added after the first bundles have their CRDs installed: an operator
// binary newer than its bundle (every bundle's image is built from the current code) runs with the CRDs it has.
type installedKinds struct {
	consumerGroups, plugins bool
	// gateway: the kinds of upstreams, TLS material, keys and vaults (bundle 1.5.0 on).
	gateway bool
	// grants: KongReferenceGrant (bundle 1.6.0 on).
	grants bool
	// credentials: the credential kinds (bundle 1.8.0 on).
	credentials bool
	// cloudGateways: KonnectCloudGatewayNetwork, KonnectCloudGatewayTransitGateway and
	// KonnectCloudGatewayDataPlaneGroupConfiguration (checked by the first; bundle 1.8.0 on).
	cloudGateways bool
}

// grantsFollow re-reconciles, when a KongReferenceGrant is created, changed or deleted, the objects of each kind in
// the namespaces its from entries name for that kind: the references it allows (or allowed) are checked again.
func grantsFollow() entity.FollowAll {
	return entity.FollowAll{Target: &configurationv1alpha1.KongReferenceGrant{}, Namespaces: func(kind string, o client.Object) []string {
		return grants.Namespaces(o.(*configurationv1alpha1.KongReferenceGrant), configurationv1alpha1.GroupVersion.Group, kind)
	}}
}

// optionalKinds asks the API server (through the REST mapper) which optional kinds it serves.
func optionalKinds(mapper apimeta.RESTMapper) (installedKinds, error) {
	has := func(gvk schema.GroupVersionKind) (bool, error) {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if apimeta.IsNoMatchError(err) {
			return false, nil
		}
		return err == nil, err
	}
	groups, err := has(configurationv1beta1.GroupVersion.WithKind("KongConsumerGroup"))
	if err != nil {
		return installedKinds{}, err
	}
	plugin, err := has(configurationv1.GroupVersion.WithKind("KongPlugin"))
	if err != nil {
		return installedKinds{}, err
	}
	binding, err := has(configurationv1alpha1.GroupVersion.WithKind("KongPluginBinding"))
	if err != nil {
		return installedKinds{}, err
	}
	gateway := true
	for _, kind := range gatewayKindNames {
		ok, err := has(configurationv1alpha1.GroupVersion.WithKind(kind))
		if err != nil {
			return installedKinds{}, err
		}
		gateway = gateway && ok
	}
	grantKind, err := has(configurationv1alpha1.GroupVersion.WithKind("KongReferenceGrant"))
	if err != nil {
		return installedKinds{}, err
	}
	creds, err := allInstalled(has, credentials.Names)
	if err != nil {
		return installedKinds{}, err
	}
	cloud, err := has(cloudv1alpha1.GroupVersion.WithKind("KonnectCloudGatewayNetwork"))
	if err != nil {
		return installedKinds{}, err
	}
	return installedKinds{consumerGroups: groups, plugins: groups && plugin && binding, gateway: gateway, grants: grantKind,
		credentials: creds, cloudGateways: cloud}, nil
}

// retryLimiter is the backoff of failed reconciles: exponential from 50ms, but never longer than the sync period
// nor outage.MaxFailureBackoff (controller-runtime's default grows to 1000s, far too long to wait out a burst of
// 429s or 5xx, or an API server restart, during which every request fails at once). The Konnect rate limit, not the
// workqueue, protects Konnect.
func retryLimiter(syncPeriod time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond,
		max(min(syncPeriod, outage.MaxFailureBackoff), time.Second))
}

// setupHandoff adds the hand-over's Runner when the operator runs as an OperatorVersion that takes part in its
// upgrade. Its work is to bring every entity the replaced version wrote to this version's tag scheme, in place.
//
// It runs on every replica, leader or not (the Runner does not need leader election): both versions elect their
// leader through the same Lease (--leader-elect), and the old version holds it for as long as it runs — with the
// Deployment both versions share, until the new pods are ready; with Deployments of different names, until ALM
// has moved ownership after the answer and collected the old version. Work that waited for leadership would then
// wait for itself. (Once leader, the new version's loops also write the new tags: what an object declares changed.)
// Running on several replicas,
// or twice, is safe: an entity that has the scheme's tags is not written again, and answering twice is the same
// patch. While both versions run, the old one keeps the new tags: an operator keeps identity tags of other schemes
// (entity.keepForeignIdentity), so its drift correction does not undo the re-tagging.
func setupHandoff(mgr manager.Manager, opts Options) error {
	if opts.Handoff == nil {
		return nil
	}
	retaggers, err := retaggersOf(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(&handoff.Runner{
		Target: *opts.Handoff, Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Log: mgr.GetLogger().WithName("handoff"),
		Work: func(ctx context.Context) (string, error) {
			rep, err := retag.All(ctx, retaggers)
			return rep.String(), err
		},
	})
}

// retaggersOf are the re-taggings of every kind, control planes first. The objects are read through the manager's
// cache, which runs without leadership; Konnect is asked through the loops' client factory (and rate limit).
func retaggersOf(mgr manager.Manager, opts Options) ([]retag.Retagger, error) {
	c, rs, clients, scheme := mgr.GetClient(), mgr.GetScheme(), opts.Clients, opts.TagScheme
	var out []retag.Retagger
	var errs []error
	add := func(r retag.Retagger, err error) {
		out, errs = append(out, r), append(errs, err)
	}
	installed, err := optionalKinds(mgr.GetRESTMapper())
	if err != nil {
		return nil, err
	}
	add(retag.For(c, rs, kinds.ControlPlane(), clients, scheme))
	add(retag.For(c, rs, kinds.Service(installed.gateway), clients, scheme))
	add(retag.For(c, rs, kinds.Route(), clients, scheme))
	add(retag.For(c, rs, kinds.Consumer(installed.consumerGroups), clients, scheme))
	if installed.consumerGroups {
		add(retag.For(c, rs, kinds.ConsumerGroup(), clients, scheme))
	}
	if installed.plugins {
		add(retag.For(c, rs, kinds.PluginBinding(), clients, scheme))
	}
	if installed.gateway {
		for _, r := range gatewayRetaggers(mgr, opts) {
			add(r.r, r.err)
		}
	}
	if installed.credentials {
		for _, r := range credentialRetaggers(mgr, opts) {
			add(r.r, r.err)
		}
	}
	return out, errors.Join(errs...)
}
