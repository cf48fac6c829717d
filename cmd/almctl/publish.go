package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/configmap"
)

func newPublishCommand() *cobra.Command {
	var catalogName string
	var force, noCreateSource bool
	cmd := &cobra.Command{
		Use:   "publish BUNDLE_DIR --catalog NAME [-n NAMESPACE]",
		Short: "Validate a bundle and store it in a ConfigMap catalog of the cluster",
		Long: "Validate the bundle in BUNDLE_DIR, then store it in the cluster of KUBECONFIG (or --kubeconfig) as one\n" +
			"ConfigMap labelled operators.alm.dev/catalog=NAME (see catalog/README.md for the encoding). Publishing the\n" +
			"same bundle again changes nothing; publishing different content for an already published bundle is refused\n" +
			"unless --force. Nothing installs from the catalog until a CatalogSource serves it: publish creates the ConfigMap\n" +
			"CatalogSource NAME in the namespace when there is none (and says so), unless --no-create-source.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			b, problems := bundle.Load(dir)
			for _, p := range problems {
				fmt.Fprintln(cmd.ErrOrStderr(), p.String())
			}
			if b == nil {
				return &exitError{code: 1, msg: "the bundle is not valid; nothing published"}
			}
			cms, c, ns, err := configMaps()
			if err != nil {
				return failed(err)
			}
			cm, err := configmap.Encode(b, dir, catalogName, ns)
			if err != nil {
				return failed(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			p := &publisher{out: cmd.OutOrStdout(), cms: cms, catalog: catalogName, namespace: ns, force: force, bundle: b, cm: cm}
			if err := p.replaceSameVersion(ctx); err != nil {
				return err
			}
			if err := p.store(ctx); err != nil {
				return err
			}
			return ensureSource(ctx, cmd.OutOrStdout(), c, ns, catalogName, !noCreateSource)
		},
	}
	cmd.Flags().StringVar(&catalogName, "catalog", "", "catalog name: the ConfigMap label operators.alm.dev/catalog (required)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite a published bundle whose content differs")
	cmd.Flags().BoolVar(&noCreateSource, "no-create-source", false,
		"do not create the ConfigMap CatalogSource NAME when the namespace has none; say how to create it instead")
	_ = cmd.MarkFlagRequired("catalog")
	return cmd
}

// configMaps is the ConfigMap client of the namespace (default: the kubeconfig context's) in the cluster of the
// kubeconfig (default: $KUBECONFIG or ~/.kube/config), the client of ALM's API there, and the namespace.
func configMaps() (typedcorev1.ConfigMapInterface, client.Client, string, error) {
	cfg, namespace, err := restConfig()
	if err != nil {
		return nil, nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	c, err := kubeClient(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	return cs.CoreV1().ConfigMaps(namespace), c, namespace, nil
}

// publisher stores one bundle's ConfigMap in a catalog.
type publisher struct {
	out                io.Writer
	cms                typedcorev1.ConfigMapInterface
	catalog, namespace string
	force              bool
	bundle             *bundle.Bundle
	cm                 *corev1.ConfigMap
}

// replaceSameVersion refuses (or with --force removes) the same version of the package published under another
// bundle name: that is a different content too.
func (p *publisher) replaceSameVersion(ctx context.Context) error {
	b := p.bundle
	list, err := p.cms.List(ctx, metav1.ListOptions{LabelSelector: almv1alpha1.LabelCatalog + "=" + p.catalog})
	if err != nil {
		return failed(err)
	}
	for _, other := range list.Items {
		if other.Name == p.cm.Name || other.Annotations[configmap.AnnotationPackage] != b.Package ||
			other.Annotations[configmap.AnnotationVersion] != b.Version.String() {
			continue
		}
		if !p.force {
			return &exitError{code: 1, msg: fmt.Sprintf("version %s of %s is already published in catalog %s as configmap/%s (bundle %s); "+
				"publish a new version, or use --force to replace it", b.Version, b.Package, p.catalog, other.Name, other.Annotations[configmap.AnnotationBundle])}
		}
		if err := p.cms.Delete(ctx, other.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return failed(err)
		}
		fmt.Fprintf(p.out, "removed configmap/%s (bundle %s, same version, --force)\n", other.Name, other.Annotations[configmap.AnnotationBundle])
	}
	return nil
}

// store creates the bundle's ConfigMap, leaves an identical one as it is, and overwrites a different one only with
// --force.
func (p *publisher) store(ctx context.Context) error {
	b, cm := p.bundle, p.cm
	existing, err := p.cms.Get(ctx, cm.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := p.cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return failed(err)
		}
		fmt.Fprintf(p.out, "published %s (%s %s) to catalog %s as configmap/%s in namespace %s\n",
			b.Name, b.Package, b.Version, p.catalog, cm.Name, p.namespace)
		return nil
	case err != nil:
		return failed(err)
	}
	if existing.Annotations[configmap.AnnotationDigest] == cm.Annotations[configmap.AnnotationDigest] &&
		existing.Labels[almv1alpha1.LabelCatalog] == p.catalog {
		fmt.Fprintf(p.out, "unchanged: %s is already published to catalog %s as configmap/%s\n", b.Name, p.catalog, cm.Name)
		return nil
	}
	if !p.force {
		return &exitError{code: 1, msg: fmt.Sprintf("configmap/%s in namespace %s already holds %s with different content; "+
			"publish a new version, or use --force to overwrite", cm.Name, p.namespace, b.Name)}
	}
	existing.Labels, existing.Annotations = cm.Labels, cm.Annotations
	existing.Data, existing.BinaryData = nil, cm.BinaryData
	if _, err := p.cms.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		return failed(err)
	}
	fmt.Fprintf(p.out, "overwrote %s in catalog %s (configmap/%s, --force)\n", b.Name, p.catalog, cm.Name)
	return nil
}

// failed is an error of the cluster or the kubeconfig: exit code 1 with its message.
func failed(err error) error {
	return &exitError{code: 1, msg: err.Error()}
}
