package noderunner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenLifetime is how long a pod's ServiceAccount token is valid; it is renewed at 80% of that.
const tokenLifetime = time.Hour

// identity is a pod's ServiceAccount on disk, like a kubelet's projected token volume:
// <dir>/serviceaccount/{token,ca.crt,namespace} and <dir>/kubeconfig, which names the token file so that client-go
// re-reads the token when the runner renews it.
type identity struct {
	clientset      kubernetes.Interface
	server         string
	caData         []byte
	dir            string
	namespace      string
	serviceAccount string
}

func newIdentity(cs kubernetes.Interface, admin *rest.Config, dir, namespace, serviceAccount string) (*identity, error) {
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			return nil, err
		}
	}
	return &identity{clientset: cs, server: admin.Host, caData: ca, dir: dir, namespace: namespace, serviceAccount: serviceAccount}, nil
}

// kubeconfigPath is the file passed to the pod's processes as KUBECONFIG.
func (id *identity) kubeconfigPath() string { return filepath.Join(id.dir, "kubeconfig") }

func (id *identity) tokenPath() string { return filepath.Join(id.dir, "serviceaccount", "token") }

// refresh requests a new token with the TokenRequest API and writes the files; it returns when to refresh next.
func (id *identity) refresh(ctx context.Context) (time.Duration, error) {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(tokenLifetime / time.Second)),
	}}
	sas := id.clientset.CoreV1().ServiceAccounts(id.namespace)
	resp, err := sas.CreateToken(ctx, id.serviceAccount, tr, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) && id.serviceAccount == "default" {
		// Without the serviceaccount controller nobody creates a namespace's "default" ServiceAccount: do it here.
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: id.namespace, Name: "default"}}
		if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("creating ServiceAccount %s/default: %w", id.namespace, err)
		}
		resp, err = sas.CreateToken(ctx, id.serviceAccount, tr, metav1.CreateOptions{})
	}
	if err != nil {
		return 0, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", id.namespace, id.serviceAccount, err)
	}
	saDir := filepath.Dir(id.tokenPath())
	if err := os.MkdirAll(saDir, 0o700); err != nil {
		return 0, err
	}
	for file, data := range map[string][]byte{
		"token": []byte(resp.Status.Token), "ca.crt": id.caData, "namespace": []byte(id.namespace),
	} {
		if err := writeFileAtomic(filepath.Join(saDir, file), data); err != nil {
			return 0, err
		}
	}
	if err := id.writeKubeconfig(); err != nil {
		return 0, err
	}
	next := time.Until(resp.Status.ExpirationTimestamp.Time) * 4 / 5
	return max(next, time.Minute), nil
}

// writeKubeconfig writes a kubeconfig with the API server, its CA and the token file.
func (id *identity) writeKubeconfig() error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: id.server, CertificateAuthorityData: id.caData}
	kc.AuthInfos[id.serviceAccount] = &clientcmdapi.AuthInfo{TokenFile: id.tokenPath()}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: id.serviceAccount, Namespace: id.namespace}
	kc.CurrentContext = "local"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return writeFileAtomic(id.kubeconfigPath(), data)
}

// writeFileAtomic writes data to a temporary file and renames it to path, so readers never see half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
