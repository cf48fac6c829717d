package localenv

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/test/konnectsim"
)

// DemoNamespace is where the story declares its Konnect objects.
const DemoNamespace = "demo"

// Demo names the Konnect objects of the story: an auth configuration whose token is in a Secret, a control plane, a
// service with a route, and a consumer.
const (
	DemoSecret       = "konnect-token"
	DemoAuth         = "konnect"
	DemoControlPlane = "demo"
	DemoService      = "echo"
	DemoRoute        = "echo"
	DemoConsumer     = "alice"
	// DemoServiceHost is the service's declared host.
	DemoServiceHost = "echo.demo.svc"
)

// DemoObjects are the Konnect objects the story applies in namespace, the Secret first.
func (e *Env) DemoObjects(namespace string) []client.Object {
	ref := &configurationv1alpha1.ControlPlaneRef{
		Type:                 configurationv1alpha1.ControlPlaneRefKonnectNamespacedRef,
		KonnectNamespacedRef: &configurationv1alpha1.KonnectNamespacedRef{Name: DemoControlPlane},
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: namespace, Name: name} }
	serviceName, routeName := DemoService, DemoRoute
	return []client.Object{
		&corev1.Secret{ObjectMeta: meta(DemoSecret), StringData: map[string]string{"token": e.KonnectToken}},
		&konnectv1alpha1.KonnectAPIAuthConfiguration{ObjectMeta: meta(DemoAuth), Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{
			Type: konnectv1alpha1.KonnectAPIAuthTypeSecretRef, SecretRef: &corev1.SecretReference{Name: DemoSecret}, ServerURL: e.KonnectURL,
		}},
		&konnectv1alpha2.KonnectGatewayControlPlane{ObjectMeta: meta(DemoControlPlane), Spec: konnectv1alpha2.KonnectGatewayControlPlaneSpec{
			CreateControlPlaneRequest: &konnectv1alpha2.CreateControlPlaneRequest{Name: "alm-demo", Labels: map[string]string{"app": "alm-demo"}},
			KonnectConfiguration:      konnectv1alpha1.KonnectConfiguration{APIAuthConfigurationRef: konnectv1alpha1.KonnectAPIAuthConfigurationRef{Name: DemoAuth}},
		}},
		&configurationv1alpha1.KongService{ObjectMeta: meta(DemoService), Spec: configurationv1alpha1.KongServiceSpec{
			ControlPlaneRef:    ref,
			KongServiceAPISpec: configurationv1alpha1.KongServiceAPISpec{Name: &serviceName, Host: DemoServiceHost, Port: 80, Protocol: "http"},
		}},
		&configurationv1alpha1.KongRoute{ObjectMeta: meta(DemoRoute), Spec: configurationv1alpha1.KongRouteSpec{
			ServiceRef: &configurationv1alpha1.ServiceRef{
				Type: configurationv1alpha1.ServiceRefNamespacedRef, NamespacedRef: &configurationv1alpha1.NameRef{Name: DemoService},
			},
			KongRouteAPISpec: configurationv1alpha1.KongRouteAPISpec{Name: &routeName, Paths: []string{"/echo"}},
		}},
		&configurationv1.KongConsumer{ObjectMeta: meta(DemoConsumer), Username: DemoConsumer, Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: ref}},
	}
}

// ApplyDemo creates the story's Konnect objects in namespace (creating the namespace).
func (s *Story) ApplyDemo(ctx context.Context, namespace string) error {
	if err := s.EnsureNamespace(ctx, namespace); err != nil {
		return err
	}
	for _, obj := range s.Env.DemoObjects(namespace) {
		if err := s.Env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// KonnectIDs are the Konnect ids of the story's objects, by "Kind/name".
type KonnectIDs map[string]string

func (ids KonnectIDs) String() string {
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+ids[k])
	}
	return strings.Join(parts, " ")
}

// WaitProgrammed waits until every Konnect object of the story in namespace is Programmed and returns their ids.
func (s *Story) WaitProgrammed(ctx context.Context, namespace string) (KonnectIDs, error) {
	ids := KonnectIDs{}
	err := Poll(ctx, s.Timeout, func() error {
		for _, obj := range s.Env.DemoObjects(namespace)[2:] { // the Secret and the auth configuration have no entity
			if err := s.Env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			id, conds := konnectState(obj)
			kind := fmt.Sprintf("%T", obj)[strings.LastIndex(fmt.Sprintf("%T", obj), ".")+1:]
			c := apimeta.FindStatusCondition(conds, konnectv1alpha1.ConditionProgrammed)
			if c == nil || c.Status != metav1.ConditionTrue || id == "" {
				return fmt.Errorf("%s %s/%s is not Programmed: %v", kind, namespace, obj.GetName(), c)
			}
			ids[kind+"/"+obj.GetName()] = id
		}
		return nil
	})
	return ids, err
}

func konnectState(obj client.Object) (string, []metav1.Condition) {
	switch o := obj.(type) {
	case *konnectv1alpha2.KonnectGatewayControlPlane:
		return o.Status.ID, o.Status.Conditions
	case *configurationv1alpha1.KongService:
		if o.Status.Konnect != nil {
			return o.Status.Konnect.ID, o.Status.Conditions
		}
		return "", o.Status.Conditions
	case *configurationv1alpha1.KongRoute:
		if o.Status.Konnect != nil {
			return o.Status.Konnect.ID, o.Status.Conditions
		}
		return "", o.Status.Conditions
	case *configurationv1.KongConsumer:
		if o.Status.Konnect != nil {
			return o.Status.Konnect.ID, o.Status.Conditions
		}
		return "", o.Status.Conditions
	}
	return "", nil
}

// EditServiceInKonnect changes the story service's host in the simulator, as a person in the Konnect UI would, and
// waits until the operator has put the declared host back. It returns false with real Konnect (the simulator is
// needed for an out-of-band edit here).
func (s *Story) EditServiceInKonnect(ctx context.Context, serviceID string) (bool, error) {
	if s.Env.Sim == nil {
		return false, nil
	}
	if err := s.Env.Sim.Edit(serviceID, map[string]any{"host": "edited-in-the-ui.example.com"}); err != nil {
		return false, err
	}
	return true, Poll(ctx, s.Timeout, func() error {
		for _, o := range s.Env.Sim.ObjectsOf(konnectsim.KindService) {
			if o.ID == serviceID {
				if host := o.JSON["host"]; host != DemoServiceHost {
					return fmt.Errorf("the service's host in Konnect is %v, want %s back", host, DemoServiceHost)
				}
				return nil
			}
		}
		return fmt.Errorf("service %s is gone from Konnect", serviceID)
	})
}
