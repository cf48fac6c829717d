package main

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// ensureSource makes sure a CatalogSource serves the ConfigMap catalog name in namespace, where publish just stored
// a bundle: nothing installs from ConfigMaps no CatalogSource selects. When there is none it creates one (create) or
// says how to; when the one there serves something else it says so. A CatalogSource it may not create or read is
// explained, not an error: the bundle is published.
func ensureSource(ctx context.Context, out io.Writer, c client.Client, namespace, name string, create bool) error {
	cs := &almv1alpha1.CatalogSource{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cs)
	switch {
	case err == nil && cs.Spec.ConfigMap != nil:
		return nil
	case err == nil:
		fmt.Fprintf(out, "warning: CatalogSource %s/%s does not serve ConfigMaps (its spec has no configMap source), so it does not serve what was just published; "+
			"publish to a catalog of its own name, or add spec.configMap: {} to it\n", namespace, name)
		return nil
	case !apierrors.IsNotFound(err):
		fmt.Fprintf(out, "could not check for CatalogSource %s/%s (%v); nothing installs from catalog %s until one serves it:\n%s", namespace, name, err, name, howToCreate(namespace, name))
		return nil
	case !create:
		fmt.Fprintf(out, "no CatalogSource %s/%s serves catalog %s, so nothing installs from it yet (--no-create-source); create it with:\n%s", namespace, name, name, howToCreate(namespace, name))
		return nil
	}
	cs = &almv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       almv1alpha1.CatalogSourceSpec{DisplayName: "ConfigMap catalog " + name + " (created by almctl publish)", ConfigMap: &almv1alpha1.ConfigMapSource{}},
	}
	if err := c.Create(ctx, cs); err != nil && !apierrors.IsAlreadyExists(err) {
		fmt.Fprintf(out, "could not create CatalogSource %s/%s (%v); nothing installs from catalog %s until one serves it:\n%s", namespace, name, err, name, howToCreate(namespace, name))
		return nil
	}
	fmt.Fprintf(out, "created CatalogSource %s/%s (spec.configMap: {}): it serves catalog %s to AppTypes in %s (in every namespace if that is ALM's own); "+
		"see: kubectl get catsrc -n %s %s\n", namespace, name, name, namespace, namespace, name)
	return nil
}

// howToCreate is the manifest of the ConfigMap CatalogSource name in namespace, as a command.
func howToCreate(namespace, name string) string {
	return fmt.Sprintf(`kubectl apply -f - <<'YAML'
apiVersion: operators.alm.dev/v1alpha1
kind: CatalogSource
metadata: {name: %s, namespace: %s}
spec: {configMap: {}}
YAML
`, name, namespace)
}
