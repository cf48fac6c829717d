package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/almproject/alm/test/helm"
	"github.com/almproject/alm/test/localenv"
)

// TestHelmInstall installs ALM with the chart, as docs/howto/install.md tells a cluster admin, on a cluster without
// it: helm lints the chart and installs it with its defaults, ALM runs on the node and installs a published
// operator; helm uninstall removes ALM and keeps the CRDs.
func TestHelmInstall(t *testing.T) {
	ctx, env, story := startWith(t, localenv.Options{NoALM: true})
	chart := filepath.Join(root, "charts", "alm")
	if out, err := helm.Run(t, "lint", "--strict", chart); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	out, err := helm.Run(t, "install", "alm", chart, "--kubeconfig", env.Kubeconfig,
		"--namespace", localenv.ALMNamespace, "--create-namespace", "--wait", "--timeout", "3m")
	if err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Logf("helm install:\n%s", out)
	must(t, env.WaitDeploymentAvailable(ctx, localenv.ALMNamespace, localenv.ALMDeployment, 2*time.Minute))

	// The chart's ALM works: a published operator is installed for an AppType.
	_, err = story.Publish(ctx, filepath.Join(root, "bundles", "konnect-operator", "1.0.0"))
	must(t, err)
	must(t, story.CreateCatalog(ctx))
	must(t, story.DeclareAppType(ctx, "helm-demo", localenv.Package))
	_, err = story.WaitInstalled(ctx, "helm-demo", localenv.Package, "1.0.0")
	must(t, err)

	out, err = helm.Run(t, "list", "--kubeconfig", env.Kubeconfig, "--namespace", localenv.ALMNamespace)
	must(t, err)
	if !strings.Contains(out, "deployed") {
		t.Errorf("helm list does not show the release deployed:\n%s", out)
	}
	_, err = helm.Run(t, "uninstall", "alm", "--kubeconfig", env.Kubeconfig, "--namespace", localenv.ALMNamespace, "--wait")
	must(t, err)
	err = env.Client.Get(ctx, types.NamespacedName{Namespace: localenv.ALMNamespace, Name: localenv.ALMDeployment}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ALM's Deployment after helm uninstall: %v, want NotFound", err)
	}
	// crds.keep (the default): deleting a CRD would delete every AppType and OperatorVersion.
	must(t, env.Client.Get(ctx, types.NamespacedName{Name: "apptypes.operators.alm.dev"}, &apiextensionsv1.CustomResourceDefinition{}))
}
