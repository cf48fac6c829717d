package localenv

import (
	"context"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The names the story uses.
const (
	// CatalogName is the ConfigMap CatalogSource in ALM's namespace that the story publishes into; it serves every
	// namespace.
	CatalogName = "konnect-catalog"
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
	// Timeout bounds each wait.
	Timeout time.Duration
	start   time.Time
	step    int
}

// NewStory returns a story on e that prints to out.
func NewStory(e *Env, out io.Writer) *Story {
	return &Story{Env: e, Out: out, Timeout: 2 * time.Minute, start: time.Now()}
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

// CreateCatalog creates the ConfigMap CatalogSource CatalogName in ALM's namespace.
func (s *Story) CreateCatalog(ctx context.Context) error {
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ALMNamespace, Name: CatalogName},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			DisplayName: "Bundles published with almctl publish", ConfigMap: &operatorsv1alpha1.ConfigMapSource{},
		},
	}
	if err := s.Env.Client.Create(ctx, cs); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
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

// Publish publishes a bundle directory into the story's catalog with almctl, as a publisher would.
func (s *Story) Publish(ctx context.Context, bundleDir string) (string, error) {
	return s.Env.Almctl(ctx, "publish", bundleDir, "--catalog", CatalogName, "-n", ALMNamespace)
}

// DeclareAppType creates the AppType for pkg in namespace (creating the namespace).
func (s *Story) DeclareAppType(ctx context.Context, namespace, pkg string) error {
	if err := s.EnsureNamespace(ctx, namespace); err != nil {
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
