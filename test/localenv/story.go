package localenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The names the story uses.
const (
	// CatalogName is the image CatalogSource in ALM's namespace on the catalog image the story publishes to; it
	// serves every namespace.
	CatalogName = "alm-catalog"
	// CatalogPollInterval is how often CatalogName checks the catalog tag for a new digest: ALM's floor for a
	// registry that is not on loopback (ALM, in its pod, reaches the environment's registry on the node's address).
	// After each publish the story asks for a poll at once, as a publisher can: `kubectl annotate catsrc
	// alm-catalog refresh=<anything new>` (RefreshAnnotation).
	CatalogPollInterval = time.Minute
	// RefreshAnnotation is the annotation the story changes on CatalogName after a publish: ALM reads a CatalogSource
	// again on any annotation change.
	RefreshAnnotation = "refresh"
	// Package is the Konnect operator's package in bundles/.
	Package = "konnect-operator"
	// OperatorNamespace is where the story installs the Konnect operator.
	OperatorNamespace = "konnect-system"
)

// Story tells ALM's story on an Env: publish, install, sync to Konnect, upgrade by replaces. Each step prints its
// elapsed time and the kubectl command that shows its result.
type Story struct {
	Env *Env
	Out io.Writer
	// Catalog publishes bundles to the environment's registry: bundle images and the catalog image CatalogName
	// polls.
	Catalog *Publisher
	// Timeout bounds each wait.
	Timeout time.Duration
	start   time.Time
	step    int
}

// NewStory returns a story on e that prints to out.
func NewStory(e *Env, out io.Writer) *Story {
	return &Story{Env: e, Out: out, Timeout: 2 * time.Minute, start: time.Now(),
		Catalog: &Publisher{Registry: e.Registry.Host, CA: e.Registry.CAPEM, Dir: filepath.Join(e.StateDir, "catalog")}}
}

// Step runs fn as the next numbered step: a title line first, then fn's summary and how to look at it.
func (s *Story) Step(title, kubectl string, fn func() (string, error)) error {
	s.step++
	fmt.Fprintf(s.Out, "\n[%6.1fs] %d. %s\n", time.Since(s.start).Seconds(), s.step, title)
	summary, err := fn()
	if err != nil {
		return fmt.Errorf("step %d (%s): %w", s.step, title, err)
	}
	if summary != "" {
		fmt.Fprintf(s.Out, "          %s\n", summary)
	}
	if kubectl != "" {
		fmt.Fprintf(s.Out, "          see: kubectl %s\n", kubectl)
	}
	fmt.Fprintf(s.Out, "[%6.1fs]    done\n", time.Since(s.start).Seconds())
	return nil
}

// Elapsed is the time since the story began.
func (s *Story) Elapsed() time.Duration { return time.Since(s.start) }

// EnsureNamespace creates a namespace unless it exists.
func (s *Story) EnsureNamespace(ctx context.Context, name string) error {
	err := s.Env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// CreateCatalog creates the image CatalogSource CatalogName in ALM's namespace on the story's catalog image.
func (s *Story) CreateCatalog(ctx context.Context) error {
	return s.CreateImageCatalog(ctx, CatalogName, s.Catalog.CatalogRef())
}

// RegistryCAConfigMap is the ConfigMap in ALM's namespace holding the environment's registry CA (key ca.crt), which
// CatalogSources on that registry name as their caBundle.
const RegistryCAConfigMap = "local-registry-ca"

// CreateImageCatalog creates an image CatalogSource in ALM's namespace on the catalog image ref. The environment's
// registry is trusted through its CA (RegistryCAConfigMap) and polled every CatalogPollInterval; a registry on
// loopback is pulled over plain HTTP, as often; any other every minute, over TLS.
func (s *Story) CreateImageCatalog(ctx context.Context, name, ref string) error {
	src := &operatorsv1alpha1.ImageSource{Ref: ref, PollInterval: &metav1.Duration{Duration: time.Minute}}
	switch {
	case strings.HasPrefix(ref, s.Env.Registry.Host+"/"):
		if err := s.ensureRegistryCA(ctx); err != nil {
			return err
		}
		src.CABundle = &operatorsv1alpha1.ConfigMapKeySelector{Name: RegistryCAConfigMap, Key: "ca.crt"}
		src.PollInterval.Duration = CatalogPollInterval
	case onLoopback(ref):
		src.Insecure, src.PollInterval.Duration = true, CatalogPollInterval
	}
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ALMNamespace, Name: name},
		Spec:       operatorsv1alpha1.CatalogSourceSpec{DisplayName: "Catalog image " + ref, Image: src},
	}
	if err := s.Env.Client.Create(ctx, cs); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func (s *Story) ensureRegistryCA(ctx context.Context) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ALMNamespace, Name: RegistryCAConfigMap},
		Data:       map[string]string{"ca.crt": string(s.Env.Registry.CAPEM)},
	}
	if err := s.Env.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ConfigMap %s/%s with the registry's CA: %w", ALMNamespace, RegistryCAConfigMap, err)
	}
	return nil
}

// onLoopback says whether an image reference's registry is on loopback (localhost, 127.0.0.0/8, ::1).
func onLoopback(ref string) bool {
	r, err := name.ParseReference(ref)
	if err != nil {
		return false
	}
	host := r.Context().RegistryStr()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// WaitCatalogServes waits until the CatalogSource name in ALM's namespace serves the catalog image digest: its
// status.image.digest is digest and it is Ready.
func (s *Story) WaitCatalogServes(ctx context.Context, name, digest string) (*operatorsv1alpha1.CatalogSource, error) {
	cs := &operatorsv1alpha1.CatalogSource{}
	err := Poll(ctx, s.Timeout, func() error {
		if err := s.Env.Client.Get(ctx, types.NamespacedName{Namespace: ALMNamespace, Name: name}, cs); err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(cs.Status.Conditions, operatorsv1alpha1.ConditionReady)
		if cs.Status.Image == nil || cs.Status.Image.Digest != digest || ready == nil || ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("CatalogSource %s/%s serves %+v (Ready: %v), want digest %s", ALMNamespace, name, cs.Status.Image, ready, digest)
		}
		return nil
	})
	return cs, err
}

// CreateDirectoryCatalog serves the bundles in dir (a path ALM can read) through a directory CatalogSource.
func (s *Story) CreateDirectoryCatalog(ctx context.Context, name, dir string) error {
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ALMNamespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			DisplayName: "Bundles in " + dir, Directory: &operatorsv1alpha1.DirectorySource{Path: dir},
		},
	}
	if err := s.Env.Client.Create(ctx, cs); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Publish publishes a bundle directory as a publisher does for a real cluster: it pushes the bundle image, then the
// catalog image of every bundle published so far to the tag CatalogName polls (Publisher.Publish), and, once
// CatalogName exists, asks it to poll now (RefreshAnnotation) rather than within CatalogPollInterval.
func (s *Story) Publish(ctx context.Context, bundleDir string) (Published, error) {
	pub, err := s.Catalog.Publish(ctx, bundleDir)
	if err != nil {
		return pub, err
	}
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ALMNamespace, Name: CatalogName}}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+RefreshAnnotation+`":"`+pub.CatalogDigest+`"}}}`))
	if err := s.Env.Client.Patch(ctx, cs, patch); err != nil && !apierrors.IsNotFound(err) {
		return pub, fmt.Errorf("asking CatalogSource %s/%s to poll now: %w", ALMNamespace, CatalogName, err)
	}
	return pub, nil
}

// TrustNamespace is what a cluster admin does once for a namespace it installs operators in: it creates the
// namespace unless it exists and labels it operators.alm.dev/trusted-installs=true, so ALM installs there with its
// own permissions.
func (s *Story) TrustNamespace(ctx context.Context, name string) error {
	if err := s.EnsureNamespace(ctx, name); err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, operatorsv1alpha1.LabelTrustedInstalls)
	return s.Env.Client.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// DeclareAppType creates the AppType for pkg in namespace as a cluster admin: in a namespace it trusts
// (TrustNamespace), with no ServiceAccount.
func (s *Story) DeclareAppType(ctx context.Context, namespace, pkg string) error {
	if err := s.TrustNamespace(ctx, namespace); err != nil {
		return err
	}
	at := &operatorsv1alpha1.AppType{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pkg},
		Spec:       operatorsv1alpha1.AppTypeSpec{Package: pkg},
	}
	if err := s.Env.Client.Create(ctx, at); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// WaitInstalled waits until the AppType pkg in namespace runs version: its OperatorVersion has Succeeded and is
// the only version of the package left (older ones are garbage-collected).
func (s *Story) WaitInstalled(ctx context.Context, namespace, pkg, version string) (*operatorsv1alpha1.OperatorVersion, error) {
	name := pkg + ".v" + version
	ov := &operatorsv1alpha1.OperatorVersion{}
	err := Poll(ctx, s.Timeout, func() error {
		at := &operatorsv1alpha1.AppType{}
		if err := s.Env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pkg}, at); err != nil {
			return err
		}
		if at.Status.InstalledVersion != version {
			return fmt.Errorf("AppType %s/%s has installed %q, want %s", namespace, pkg, at.Status.InstalledVersion, version)
		}
		if err := s.Env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, ov); err != nil {
			return err
		}
		if ov.Status.Phase != operatorsv1alpha1.PhaseSucceeded {
			return fmt.Errorf("OperatorVersion %s/%s is %s (%s)", namespace, name, ov.Status.Phase, ov.Status.Message)
		}
		list := &operatorsv1alpha1.OperatorVersionList{}
		if err := s.Env.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, other := range list.Items {
			if other.Spec.PackageName == pkg && other.Name != name {
				return fmt.Errorf("%s is still there (%s)", other.Name, other.Status.Phase)
			}
		}
		return nil
	})
	return ov, err
}

// OperatorDeployment returns the Konnect operator's Deployment in namespace.
func (s *Story) OperatorDeployment(ctx context.Context, namespace string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	return d, s.Env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: Package}, d)
}
