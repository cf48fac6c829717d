// Package cloudgateway holds the Dedicated Cloud Gateway kinds (Kong's operator's KonnectCloudGatewayNetwork): a
// network Konnect provisions in the cloud provider, which takes minutes. Its loop differs from the generic one
// (entity) in what Programmed means: the network is created at once, but Programmed only once Konnect reports it
// ready; until then the Programmed condition carries its state (reason Provisioning), and the network is read
// again after Poll. Each read is one GET through the organization's rate gate at read priority (konnectapi), so a
// wait of many networks takes its share of the budget behind writes instead of a tight poll. A failed provisioning
// (Konnect's state_metadata names a reason) is reported with that reason (ProvisioningFailed) and read again once
// a sync period.
package cloudgateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cloudv1alpha1 "github.com/almproject/alm/apis/konnect/cloudgateway/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
	"github.com/almproject/alm/internal/status"
)

// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=konnect.konghq.com,resources=konnectcloudgatewaynetworks/finalizers,verbs=update

// Condition reasons of a network that is not ready.
const (
	// ReasonProvisioning: Konnect is provisioning the network; the message names its state.
	ReasonProvisioning = "Provisioning"
	// ReasonProvisioningFailed: Konnect reports why the network could not be provisioned.
	ReasonProvisioningFailed = "ProvisioningFailed"
	// StateReady is the network state in which it is Programmed.
	StateReady = "ready"
)

// DefaultPoll is how soon a network that is being provisioned is read again: Konnect takes minutes.
const DefaultPoll = 30 * time.Second

// indexAuth finds the networks that use a KonnectAPIAuthConfiguration.
const indexAuth = "konnect.cloudgateway.authRef"

// NetworkReconciler keeps a KonnectCloudGatewayNetwork's network in Konnect.
type NetworkReconciler struct {
	client.Client
	Clients    konnectapi.ClientFactory
	SyncPeriod time.Duration
	// Poll is how soon a network being provisioned is read again (DefaultPoll when <= 0).
	Poll time.Duration

	// created holds the ID of each network this process created until the object's status shows it: a reconcile
	// that reads an older copy (the event of the finalizer update, before the status write) must not create the
	// network a second time.
	created sync.Map // types.UID -> string
}

// SetupWithManager registers the loop: networks, and the auth configurations they use.
func (r *NetworkReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &cloudv1alpha1.KonnectCloudGatewayNetwork{}, indexAuth, func(o client.Object) []string {
		return []string{o.(*cloudv1alpha1.KonnectCloudGatewayNetwork).Spec.KonnectConfiguration.APIAuthConfigurationRef.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("konnectcloudgatewaynetwork").WithOptions(opts).
		For(&cloudv1alpha1.KonnectCloudGatewayNetwork{}).
		Watches(&konnectv1alpha1.KonnectAPIAuthConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.usersOf), builder.WithPredicates()).
		Complete(r)
}

// usersOf are the networks that use the auth configuration o.
func (r *NetworkReconciler) usersOf(ctx context.Context, o client.Object) []reconcile.Request {
	list := &cloudv1alpha1.KonnectCloudGatewayNetworkList{}
	if err := r.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexAuth: o.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, n := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&n)})
	}
	return reqs
}

// Reconcile: deletion or finalizer, the auth reference, create or read the network, one status write.
func (r *NetworkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	n := &cloudv1alpha1.KonnectCloudGatewayNetwork{}
	if err := r.Get(ctx, req.NamespacedName, n); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !n.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, n)
	}
	if controllerutil.AddFinalizer(n, entity.Finalizer) {
		if err := r.Update(ctx, n); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	orig := n.DeepCopy()
	res, err := r.sync(ctx, n)
	return res, joinErr(err, status.Patch(ctx, r, orig, n))
}

func joinErr(err, perr error) error {
	if err != nil {
		return err
	}
	return perr
}

// sync creates the network or reads its state, and reports it.
func (r *NetworkReconciler) sync(ctx context.Context, n *cloudv1alpha1.KonnectCloudGatewayNetwork) (ctrl.Result, error) {
	auth, check, err := kindbase.ResolveAuth(ctx, r, n.Namespace, n.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	setRefCondition(n, check)
	if !check.OK {
		setProgrammed(n, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, check.Message)
		return ctrl.Result{RequeueAfter: entity.Recheck}, nil
	}
	api, serverURL, err := r.Clients.API(ctx, auth)
	if err != nil {
		setProgrammed(n, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, "the KonnectAPIAuthConfiguration cannot be used: "+err.Error())
		return ctrl.Result{}, err
	}
	var net *components.Network
	if id, ok := r.created.Load(n.UID); ok && n.Status.ID == "" {
		n.Status.ID = id.(string)
	} else if ok {
		r.created.Delete(n.UID)
	}
	if n.Status.ID == "" {
		net, err = createNetwork(ctx, api, n)
		if err != nil {
			setProgrammed(n, metav1.ConditionFalse, konnectv1alpha1.ReasonCreateFailed, "Konnect create failed: "+err.Error())
			return ctrl.Result{}, failure(err)
		}
		r.created.Store(n.UID, net.ID)
	} else {
		net, err = getNetwork(ctx, api, n.Status.ID)
		if konnectapi.IsNotFound(err) {
			// Deleted in Konnect: made anew at once.
			n.Status.KonnectEntityStatus, n.Status.State = konnectv1alpha1.KonnectEntityStatus{}, ""
			r.created.Delete(n.UID)
			setProgrammed(n, metav1.ConditionFalse, konnectv1alpha1.ReasonPending, "the network no longer exists in Konnect: creating it again")
			return ctrl.Result{Requeue: true}, nil
		}
		if err != nil {
			setProgrammed(n, metav1.ConditionFalse, konnectv1alpha1.ReasonUpdateFailed, "Konnect get failed: "+err.Error())
			return ctrl.Result{}, failure(err)
		}
	}
	n.Status.KonnectEntityStatus = konnectv1alpha1.KonnectEntityStatus{ID: net.ID, ServerURL: serverURL, OrgID: auth.Status.OrganizationID}
	n.Status.State = string(net.State)
	return r.report(n, net), nil
}

// report sets Programmed from the network's state and says when to read it again.
func (r *NetworkReconciler) report(n *cloudv1alpha1.KonnectCloudGatewayNetwork, net *components.Network) ctrl.Result {
	switch {
	case n.Status.State == StateReady:
		setProgrammed(n, metav1.ConditionTrue, konnectv1alpha1.ReasonProgrammed, fmt.Sprintf("network %s is ready in Konnect", net.ID))
		return ctrl.Result{RequeueAfter: r.SyncPeriod}
	case net.StateMetadata != nil && net.StateMetadata.Reason != nil && *net.StateMetadata.Reason != "":
		setProgrammed(n, metav1.ConditionFalse, ReasonProvisioningFailed, fmt.Sprintf("network %s is %s in Konnect: %s", net.ID, n.Status.State, *net.StateMetadata.Reason))
		return ctrl.Result{RequeueAfter: r.SyncPeriod}
	}
	setProgrammed(n, metav1.ConditionFalse, ReasonProvisioning, fmt.Sprintf("network %s is %s in Konnect", net.ID, n.Status.State))
	poll := r.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	return ctrl.Result{RequeueAfter: poll}
}

// failure: a refusal (4xx) waits for a change of the object; anything else is retried with backoff.
func failure(err error) error {
	if konnectapi.IsPermanent(err) {
		return reconcile.TerminalError(err)
	}
	return err
}

// finalize deletes the network from Konnect (a missing one is gone already) and lets the object go.
func (r *NetworkReconciler) finalize(ctx context.Context, n *cloudv1alpha1.KonnectCloudGatewayNetwork) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(n, entity.Finalizer) {
		return ctrl.Result{}, nil
	}
	if n.Status.ID != "" {
		auth, check, err := kindbase.ResolveAuth(ctx, r, n.Namespace, n.Spec.KonnectConfiguration.APIAuthConfigurationRef.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if check.OK {
			api, _, err := r.Clients.API(ctx, auth)
			if err != nil {
				return ctrl.Result{}, err
			}
			err = konnectapi.CallSDK(ctx, api, "delete cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
				_, err := sdk.CloudGateways.DeleteNetwork(ctx, n.Status.ID)
				return err
			})
			if err != nil && !konnectapi.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		}
	}
	controllerutil.RemoveFinalizer(n, entity.Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, n))
}

func createNetwork(ctx context.Context, api konnectapi.API, n *cloudv1alpha1.KonnectCloudGatewayNetwork) (*components.Network, error) {
	req := components.CreateNetworkRequest{
		Name: n.Spec.Name, CloudGatewayProviderAccountID: n.Spec.CloudGatewayProviderAccountID, Region: n.Spec.Region,
		AvailabilityZones: n.Spec.AvailabilityZones, CidrBlock: n.Spec.CidrBlock,
	}
	if n.Spec.State != nil {
		s := components.NetworkCreateState(*n.Spec.State)
		req.State = &s
	}
	var out *components.Network
	err := konnectapi.CallSDK(ctx, api, "create cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.CreateNetwork(ctx, req)
		if err != nil {
			return err
		}
		if out = resp.Network; out == nil {
			return fmt.Errorf("no network in the answer")
		}
		return nil
	})
	return out, err
}

func getNetwork(ctx context.Context, api konnectapi.API, id string) (*components.Network, error) {
	var out *components.Network
	err := konnectapi.CallSDK(ctx, api, "get cloud gateway network", func(ctx context.Context, sdk *sdkkonnectgo.SDK) error {
		resp, err := sdk.CloudGateways.GetNetwork(ctx, id)
		if err != nil {
			return err
		}
		if out = resp.Network; out == nil {
			return fmt.Errorf("no network in the answer")
		}
		return nil
	})
	return out, err
}

func setRefCondition(n *cloudv1alpha1.KonnectCloudGatewayNetwork, c entity.RefCheck) {
	st, reason := metav1.ConditionTrue, konnectv1alpha1.ReasonValid
	if !c.OK {
		st, reason = metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference
	}
	apimeta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: c.Type, Status: st, Reason: reason, Message: c.Message, ObservedGeneration: n.Generation})
}

func setProgrammed(n *cloudv1alpha1.KonnectCloudGatewayNetwork, st metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: konnectv1alpha1.ConditionProgrammed, Status: st, Reason: reason, Message: msg, ObservedGeneration: n.Generation})
}
