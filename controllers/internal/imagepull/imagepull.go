// Package imagepull turns an image CatalogSource into what its registry is pulled with: the credentials of its pull
// Secrets, its CA bundle, and plain HTTP for a loopback registry. The CatalogSource loop pulls catalog images with
// it and the installer pulls bundle images; both keep one client per CatalogSource in Clients.
package imagepull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/image"
)

// InvalidSpecError is a spec.image that cannot be pulled until the spec changes (e.g. insecure for a registry that
// is not on loopback).
type InvalidSpecError struct{ Msg string }

func (e *InvalidSpecError) Error() string { return e.Msg }

// Options reads what cs's spec.image refers to (pull Secrets, CA bundle ConfigMap) in cs's namespace, and returns the
// pull options and a fingerprint that changes when any of them does. A missing or wrong Secret or ConfigMap is an
// error naming the field and the object. Unless trusted (cs is in a namespace a cluster admin trusts), the options
// never connect to loopback, where only ALM's own host answers.
func Options(ctx context.Context, c client.Reader, cs *operatorsv1alpha1.CatalogSource, trusted bool) (image.Options, string, error) {
	src := cs.Spec.Image
	if src == nil {
		return image.Options{}, "", &InvalidSpecError{Msg: "spec.image is not set"}
	}
	h := sha256.New()
	opts := image.Options{DenyLoopback: !trusted}
	if !trusted {
		if host, loopback, err := OnLoopback(src.Ref); err == nil && loopback {
			// Not an invalid spec: a cluster admin may trust the namespace, and the next poll then pulls.
			return opts, "", &image.RefusedError{Image: src.Ref, Rule: image.RuleLoopback, Detail: fmt.Sprintf("spec.image.ref: the registry %s "+
				"is on loopback, which is ALM's own host; only CatalogSources in ALM's namespace or in a namespace a cluster admin "+
				"labelled %s=true may use it", host, operatorsv1alpha1.LabelTrustedInstalls)}
		}
		fmt.Fprintln(h, "deny-loopback")
	}
	if src.Insecure {
		if err := checkLoopback(src.Ref); err != nil {
			return opts, "", err
		}
		opts.Insecure = true
		fmt.Fprintln(h, "insecure")
	}
	var configs [][]byte
	for i, s := range src.PullSecrets {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: cs.Namespace, Name: s}, secret); err != nil {
			return opts, "", fmt.Errorf("spec.image.pullSecrets[%d]: Secret %s/%s: %w", i, cs.Namespace, s, hintNotFound(err))
		}
		data, ok := secret.Data[corev1.DockerConfigJsonKey]
		if secret.Type != corev1.SecretTypeDockerConfigJson || !ok {
			return opts, "", fmt.Errorf("spec.image.pullSecrets[%d]: Secret %s/%s is of type %q; a pull Secret is of type %s with a %s key "+
				"(kubectl create secret docker-registry)", i, cs.Namespace, s, secret.Type, corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey)
		}
		configs = append(configs, data)
		fmt.Fprintf(h, "secret %s %s\n", s, secret.ResourceVersion)
	}
	if len(configs) > 0 {
		kc, err := image.KeychainFromDockerConfigJSON(configs...)
		if err != nil {
			return opts, "", fmt.Errorf("spec.image.pullSecrets: %w", err)
		}
		opts.Keychain = kc
	}
	if ref := src.CABundle; ref != nil {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: cs.Namespace, Name: ref.Name}, cm); err != nil {
			return opts, "", fmt.Errorf("spec.image.caBundle: ConfigMap %s/%s: %w", cs.Namespace, ref.Name, hintNotFound(err))
		}
		pem, ok := cm.Data[ref.Key]
		if !ok {
			return opts, "", fmt.Errorf("spec.image.caBundle: ConfigMap %s/%s has no key %q", cs.Namespace, ref.Name, ref.Key)
		}
		opts.CABundle = []byte(pem)
		fmt.Fprintf(h, "ca %s\n", pem)
	}
	return opts, hex.EncodeToString(h.Sum(nil)), nil
}

func hintNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return errors.New("not found; create it in the CatalogSource's namespace")
	}
	return err
}

// checkLoopback allows plain HTTP only for a registry on loopback: anything else could be answered by whoever sits
// on the network path.
func checkLoopback(ref string) error {
	host, loopback, err := OnLoopback(ref)
	if err != nil {
		return &InvalidSpecError{Msg: fmt.Sprintf("spec.image.ref %q: %v", ref, err)}
	}
	if loopback {
		return nil
	}
	return &InvalidSpecError{Msg: fmt.Sprintf("spec.image.insecure: plain HTTP is allowed only for a registry on loopback (localhost, 127.0.0.0/8, ::1), not %s; serve the registry over TLS and set spec.image.caBundle for a private CA", host)}
}

// OnLoopback says whether an image reference's registry is on loopback (localhost, 127.0.0.0/8, ::1), and names
// the registry host.
func OnLoopback(ref string) (string, bool, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", false, err
	}
	host := r.Context().RegistryStr()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return host, host == "localhost" || (ip != nil && ip.IsLoopback()), nil
}

// Clients keeps one image.Client per CatalogSource while its options are unchanged: a client keeps its registry
// login, so an unchanged poll is a single request. Safe for concurrent use.
type Clients struct {
	// Trusted says whether CatalogSources in a namespace may use registries on loopback (access.Policy.Trusted);
	// nil: every namespace may. Set before first use.
	Trusted func(ctx context.Context, namespace string) (bool, error)
	// ScratchDir is where catalog images are extracted while they are parsed (image.Options.ScratchDir); "": the
	// system's temporary directory. Set before first use.
	ScratchDir string
	// Space bounds the disk the catalog pulls in progress use together in ScratchDir (image.Options.Space); nil:
	// only each pull's limits. Set before first use.
	Space *image.Space

	mu sync.Mutex
	m  map[types.NamespacedName]entry
}

type entry struct {
	fingerprint string
	client      *image.Client
}

// For returns the client for cs, creating it when cs's pull options changed.
func (cl *Clients) For(ctx context.Context, c client.Reader, cs *operatorsv1alpha1.CatalogSource) (*image.Client, error) {
	trusted := true
	if cl.Trusted != nil {
		var err error
		if trusted, err = cl.Trusted(ctx, cs.Namespace); err != nil {
			return nil, err
		}
	}
	opts, fp, err := Options(ctx, c, cs, trusted)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKeyFromObject(cs)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if e, ok := cl.m[key]; ok && e.fingerprint == fp {
		return e.client, nil
	}
	opts.ScratchDir, opts.Space = cl.ScratchDir, cl.Space
	ic, err := image.NewClient(opts)
	if err != nil {
		return nil, fmt.Errorf("spec.image.caBundle: %w", err)
	}
	if cl.m == nil {
		cl.m = map[types.NamespacedName]entry{}
	}
	cl.m[key] = entry{fingerprint: fp, client: ic}
	return ic, nil
}

// Forget drops the client of a deleted CatalogSource.
func (cl *Clients) Forget(key types.NamespacedName) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	delete(cl.m, key)
}

// Reason is the condition reason for a pull error: what went wrong with the registry or the image.
func Reason(err error) string {
	var refused *image.RefusedError
	if errors.As(err, &refused) && refused.Rule == image.RuleSQLite {
		return operatorsv1alpha1.ReasonSQLiteIndexImage
	}
	switch image.Reason(err) {
	case image.ReasonUnauthorized:
		return operatorsv1alpha1.ReasonUnauthorized
	case image.ReasonNotFound:
		return operatorsv1alpha1.ReasonImageNotFound
	case image.ReasonTLS:
		return operatorsv1alpha1.ReasonTLSError
	case image.ReasonTooLarge:
		return operatorsv1alpha1.ReasonImageTooLarge
	case image.ReasonDigestMismatch:
		return operatorsv1alpha1.ReasonDigestMismatch
	case image.ReasonRefused:
		return operatorsv1alpha1.ReasonImageRefused
	case image.ReasonUnreachable:
		return operatorsv1alpha1.ReasonRegistryUnreachable
	}
	return operatorsv1alpha1.ReasonPullFailed
}
