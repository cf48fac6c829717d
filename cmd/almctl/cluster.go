package main

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// kubeFlags are kubectl's global flags (--kubeconfig, --context, -n/--namespace, --as, --token, ...), on almctl's
// root command, so that almctl works as the kubectl plugin kubectl-alm exactly as kubectl does.
var kubeFlags = genericclioptions.NewConfigFlags(true)

// addKubeFlags puts a fresh set of kubectl's global flags on root.
func addKubeFlags(root *cobra.Command) {
	kubeFlags = genericclioptions.NewConfigFlags(true)
	kubeFlags.AddFlags(root.PersistentFlags())
}

// explicitNamespace is the namespace of -n/--namespace, "" when not given.
func explicitNamespace() string {
	if kubeFlags.Namespace == nil {
		return ""
	}
	return *kubeFlags.Namespace
}

// restConfig is the cluster of kubectl's flags and kubeconfig (--kubeconfig, else $KUBECONFIG or ~/.kube/config;
// --context, --as, ...) and the namespace to work in: -n, else the kubeconfig context's.
func restConfig() (*rest.Config, string, error) {
	namespace, _, err := kubeFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	cfg, err := kubeFlags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	return cfg, namespace, nil
}

// kubeClient is a client of ALM's API and the core kinds for cfg.
func kubeClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, almv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}
