package localkube

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubernetesServiceIP is the ClusterIP of the `kubernetes` Service: the first address of envtest's service range
// (10.0.0.0/24), where pods' in-cluster configuration points.
const KubernetesServiceIP = "10.0.0.1"

// NodeOptions configure a cluster for a real node (test/localnode):
//
//   - kube-apiserver listens on every address and advertises IP, so pods reach it through the `kubernetes` Service;
//     a connection to IP (where kube-proxy sends that Service) gets a certificate for IP, the Service's ClusterIP
//     and its names, issued by a CA of the cluster's own (kube-apiserver picks it by the address a client reached,
//     --tls-sni-cert-key), while loopback clients keep envtest's certificate;
//   - the ServiceAccount admission plugin is on (envtest turns it off), so pods get their token volume, and requests
//     are authorized by the Node authorizer and RBAC, with NodeRestriction, as on any cluster;
//   - kube-apiserver reaches the kubelet with a client certificate of that CA (for logs, exec, port-forward) and
//     webhooks at their pods' addresses (--enable-aggregator-routing);
//   - kube-controller-manager runs its default controllers, each with its own ServiceAccount, and publishes both
//     CAs in every namespace's kube-root-ca.crt; kube-scheduler runs beside it.
type NodeOptions struct {
	// IP is the node's IPv4 address, reachable from pods.
	IP string
}

// NodeCluster is what a node needs of a cluster started with NodeOptions.
type NodeCluster struct {
	IP string
	// KubeletClientCAFile is the CA of the client certificate kube-apiserver presents to the kubelet.
	KubeletClientCAFile string
	// APIServerPort is kube-apiserver's secure port, on IP and on loopback.
	APIServerPort string

	pki *PKI
}

// kubeletClientUser is the user kube-apiserver is to the kubelet, as kubeadm names it.
const kubeletClientUser = "kube-apiserver-kubelet-client"

func (cp *Cluster) prepareForNode(o NodeOptions) error {
	pki, err := NewPKI(filepath.Join(cp.Dir, "pki"), "alm-localkube-ca")
	if err != nil {
		return err
	}
	cp.Node = &NodeCluster{IP: o.IP, KubeletClientCAFile: pki.CAFile(), pki: pki}
	servingCrt, servingKey, err := pki.Serving("apiserver", o.IP, KubernetesServiceIP,
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return err
	}
	clientCrt, clientKey, err := pki.Client("kubelet-client", kubeletClientUser)
	if err != nil {
		return err
	}
	args := cp.env.ControlPlane.APIServer.Configure()
	for name, value := range map[string]string{
		"bind-address":                    "0.0.0.0",
		"advertise-address":               o.IP,
		"tls-sni-cert-key":                servingCrt + "," + servingKey + ":" + o.IP,
		"enable-admission-plugins":        "NodeRestriction",
		"authorization-mode":              "Node,RBAC",
		"kubelet-client-certificate":      clientCrt,
		"kubelet-client-key":              clientKey,
		"kubelet-preferred-address-types": "InternalIP,Hostname",
		"enable-aggregator-routing":       "true",
	} {
		args.Set(name, value)
	}
	// envtest turns the ServiceAccount admission plugin off; pods need it for their token volume.
	args.Disable("disable-admission-plugins")
	return nil
}

// startForNode starts kube-controller-manager with its default controllers and kube-scheduler, each as its own
// user, once kube-apiserver answers, and lets kube-apiserver's kubelet client call the kubelet's API.
func (cp *Cluster) startForNode(opts Options) error {
	cp.Node.APIServerPort = cp.env.ControlPlane.APIServer.SecureServing.Port
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kubeletClientUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kubeletClientUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("letting kube-apiserver call the kubelet: %w", err)
	}
	rootCA := filepath.Join(cp.Dir, "pki", "root-ca.crt")
	bundle := append(append([]byte{}, cp.env.ControlPlane.APIServer.SecureServing.CA...), cp.Node.pki.CAPEM()...)
	if err := os.WriteFile(rootCA, bundle, 0o644); err != nil {
		return err
	}
	kcm, err := cp.UserKubeconfig("system:kube-controller-manager")
	if err != nil {
		return err
	}
	if err := cp.start(opts, "kube-controller-manager",
		"--kubeconfig="+kcm,
		"--authentication-kubeconfig="+kcm, "--authorization-kubeconfig="+kcm,
		"--controllers=*,-bootstrapsigner,-tokencleaner",
		"--use-service-account-credentials",
		"--root-ca-file="+rootCA,
		"--service-account-private-key-file="+filepath.Join(cp.env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
		// Its default is under /usr/libexec, which it would create.
		"--flex-volume-plugin-dir="+filepath.Join(cp.Dir, "volume-plugins"),
	); err != nil {
		return err
	}
	scheduler, err := cp.UserKubeconfig("system:kube-scheduler")
	if err != nil {
		return err
	}
	return cp.start(opts, "kube-scheduler",
		"--kubeconfig="+scheduler,
		"--authentication-kubeconfig="+scheduler, "--authorization-kubeconfig="+scheduler,
		"--leader-elect=false",
		"--secure-port=0",
	)
}

// UserKubeconfig writes a kubeconfig for user name in groups (a client certificate of envtest's client CA) under
// Dir and returns its path.
func (cp *Cluster) UserKubeconfig(name string, groups ...string) (string, error) {
	user, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("adding user %s: %w", name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(cp.Dir, "kubeconfig-"+strings.NewReplacer(":", "-", "/", "-").Replace(name))
	return path, os.WriteFile(path, data, 0o600)
}

// WaitServiceAnswers waits until the API server answers through the `kubernetes` Service's ClusterIP, as pods reach
// it: after a restart, kube-apiserver answers on its own address first, and on the Service only once it has put its
// address back into the Service's endpoints and kube-proxy, whose watch broke with the restart and retries with
// client-go's backoff, has written them into its rules. It returns how long that took.
func (cp *Cluster) WaitServiceAnswers(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	cfg := rest.CopyConfig(cp.Config)
	cfg.Host = "https://" + net.JoinHostPort(KubernetesServiceIP, "443")
	// A reachability check: the address's certificate is the cluster CA's, which the admin configuration (made for
	// loopback) does not hold.
	cfg.CAData, cfg.CAFile, cfg.Insecure = nil, "", true
	cfg.Timeout = 2 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for {
		_, err := dc.ServerVersion()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("the API server did not answer through the kubernetes Service (%s) within %s: %w", cfg.Host, timeout, err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
