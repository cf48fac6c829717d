package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// restConfig is the cluster of the kubeconfig (default: $KUBECONFIG or ~/.kube/config) and the namespace to work in:
// namespace, else the kubeconfig context's.
func restConfig(kubeconfig, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	if namespace == "" {
		ns, _, err := cc.Namespace()
		if err != nil {
			return nil, "", err
		}
		namespace = ns
	}
	cfg, err := cc.ClientConfig()
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
