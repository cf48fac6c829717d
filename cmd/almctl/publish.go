package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog"
)

func newPublishCommand() *cobra.Command {
	var catalogName, namespace, kubeconfig string
	var force bool
	cmd := &cobra.Command{
		Use:   "publish BUNDLE_DIR --catalog NAME [-n NAMESPACE]",
		Short: "Validate a bundle and store it in a ConfigMap catalog of the cluster",
		Long: "Validate the bundle in BUNDLE_DIR, then store it in the cluster of KUBECONFIG (or --kubeconfig) as one\n" +
			"ConfigMap labelled operators.alm.dev/catalog=NAME (see catalog/README.md for the encoding). Publishing the\n" +
			"same bundle again changes nothing; publishing different content for an already published bundle is refused\n" +
			"unless --force.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			b, problems := catalog.LoadBundle(dir)
			for _, p := range problems {
				fmt.Fprintln(cmd.ErrOrStderr(), p.String())
			}
			if b == nil {
				return &exitError{code: 1, msg: "the bundle is not valid; nothing published"}
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
			if namespace == "" {
				ns, _, err := cc.Namespace()
				if err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				namespace = ns
			}
			cfg, err := cc.ClientConfig()
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			cm, err := catalog.BundleConfigMap(b, dir, catalogName, namespace)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			cms := cs.CoreV1().ConfigMaps(namespace)

			// The same version of the package published under another bundle name is a different content too.
			list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: almv1alpha1.LabelCatalog + "=" + catalogName})
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			for _, other := range list.Items {
				if other.Name == cm.Name || other.Annotations[catalog.AnnotationPackage] != b.Package ||
					other.Annotations[catalog.AnnotationVersion] != b.Version.String() {
					continue
				}
				if !force {
					return &exitError{code: 1, msg: fmt.Sprintf("version %s of %s is already published in catalog %s as configmap/%s (bundle %s); "+
						"publish a new version, or use --force to replace it", b.Version, b.Package, catalogName, other.Name, other.Annotations[catalog.AnnotationBundle])}
				}
				if err := cms.Delete(ctx, other.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return &exitError{code: 1, msg: err.Error()}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed configmap/%s (bundle %s, same version, --force)\n", other.Name, other.Annotations[catalog.AnnotationBundle])
			}

			existing, err := cms.Get(ctx, cm.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "published %s (%s %s) to catalog %s as configmap/%s in namespace %s\n",
					b.Name, b.Package, b.Version, catalogName, cm.Name, namespace)
				return nil
			case err != nil:
				return &exitError{code: 1, msg: err.Error()}
			}
			if existing.Annotations[catalog.AnnotationDigest] == cm.Annotations[catalog.AnnotationDigest] &&
				existing.Labels[almv1alpha1.LabelCatalog] == catalogName {
				fmt.Fprintf(cmd.OutOrStdout(), "unchanged: %s is already published to catalog %s as configmap/%s\n", b.Name, catalogName, cm.Name)
				return nil
			}
			if !force {
				return &exitError{code: 1, msg: fmt.Sprintf("configmap/%s in namespace %s already holds %s with different content; "+
					"publish a new version, or use --force to overwrite", cm.Name, namespace, b.Name)}
			}
			existing.Labels, existing.Annotations = cm.Labels, cm.Annotations
			existing.Data, existing.BinaryData = nil, cm.BinaryData
			if _, err := cms.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "overwrote %s in catalog %s (configmap/%s, --force)\n", b.Name, catalogName, cm.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&catalogName, "catalog", "", "catalog name: the ConfigMap label operators.alm.dev/catalog (required)")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the catalog (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite a published bundle whose content differs")
	_ = cmd.MarkFlagRequired("catalog")
	return cmd
}
