package servingcert

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations of a webhook Deployment's pod template that record the serving certificate its pods were last rolled
// onto (Rolled). ALM changes them only to roll the pods: on a new Deployment, and as the fallback (Decide).
const (
	AnnotationRolledHash     = "operators.alm.dev/serving-cert-hash"
	AnnotationRolledNotAfter = "operators.alm.dev/serving-cert-not-after"
)

// Request names what a version's webhooks hold their certificates in: the version (namespace/name, the CA's
// subject), its CA Secret and the one of the version it replaces (""), and each webhook Service.
type Request struct {
	Namespace, Version, CASecret, ReplacedCASecret string
	Services                                       []Service
}

// Service is a webhook Service, the Secret of its serving certificate and the Deployment that mounts it.
type Service struct {
	Name, Secret, Deployment string
}

// Issued is what Issue decided: the CA, per Service (in Request order) its certificate and key and what its
// Deployment's pod template records, and when to come back (a renewal or a fallback is due).
type Issued struct {
	CA      CA
	Serving []Serving
	At      time.Time
}

// Serving is one Service's certificate and key (PEM), what its pod template records, and whether its Secret exists
// already (a renewal, not an install).
type Serving struct {
	Cert, Key []byte
	Rolled    Rolled
	Existed   bool
}

// Issue reads the Secrets that hold req's certificates and the Deployments that mount them (through r), and
// decides what to write at now: EnsureCA, EnsureServing, and per Deployment Decide, which dials a Service's cluster
// IP (kube-proxy sends it to a pod) to check what it serves when the fallback is due.
func Issue(ctx context.Context, r client.Reader, req Request, now time.Time) (Issued, error) {
	own, err := secretData(ctx, r, req.Namespace, req.CASecret)
	if err != nil {
		return Issued{}, err
	}
	var replaced map[string][]byte
	if req.ReplacedCASecret != "" {
		if replaced, err = secretData(ctx, r, req.Namespace, req.ReplacedCASecret); err != nil {
			return Issued{}, err
		}
	}
	ca, _, err := EnsureCA(own, replaced, req.Namespace+"/"+req.Version, now)
	if err != nil {
		return Issued{}, fmt.Errorf("OperatorVersion %s/%s: issuing the webhook CA: %w", req.Namespace, req.Version, err)
	}
	out := Issued{CA: ca, At: NextRenewal(ca.Cert)}
	for _, svc := range req.Services {
		existing, err := secretData(ctx, r, req.Namespace, svc.Secret)
		if err != nil {
			return Issued{}, err
		}
		cert, key, err := EnsureServing(existing, ca, Hosts(svc.Name, req.Namespace), now)
		if err != nil {
			return Issued{}, fmt.Errorf("issuing the serving certificate of Secret %s/%s: %w", req.Namespace, svc.Secret, err)
		}
		rolled, err := podTemplateRecord(ctx, r, req.Namespace, svc.Deployment)
		if err != nil {
			return Issued{}, err
		}
		kept := Decide(rolled, cert, now, func() bool { return serves(ctx, r, req.Namespace, svc, ca, cert) })
		out.Serving = append(out.Serving, Serving{Cert: cert, Key: key, Rolled: kept, Existed: existing != nil})
		out.At = earliest(out.At, NextRenewal(cert))
		if at := FallbackAt(kept, cert); at.After(now) {
			out.At = earliest(out.At, at)
		}
	}
	return out, nil
}

// podTemplateRecord reads what the pod template of a Deployment records (zero: no Deployment yet).
func podTemplateRecord(ctx context.Context, r client.Reader, namespace, name string) (Rolled, error) {
	d := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d)
	if apierrors.IsNotFound(err) {
		return Rolled{}, nil
	}
	if err != nil {
		return Rolled{}, fmt.Errorf("reading Deployment %s/%s: %w", namespace, name, err)
	}
	a := d.Spec.Template.Annotations
	return Rolled{Hash: a[AnnotationRolledHash], NotAfter: a[AnnotationRolledNotAfter]}, nil
}

// serves says whether svc serves cert now (Serves, on its cluster IP and first port); a Service that cannot be
// reached or read counts as not serving it, so that the fallback rolls its pods.
func serves(ctx context.Context, r client.Reader, namespace string, svc Service, ca CA, cert []byte) bool {
	log := ctrl.LoggerFrom(ctx).WithValues("Service", namespace+"/"+svc.Name)
	s := &corev1.Service{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: svc.Name}, s); err != nil || len(s.Spec.Ports) == 0 {
		log.Info("Webhook Service not readable; rolling its pods onto the renewed serving certificate", "error", fmt.Sprint(err))
		return false
	}
	addr := net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(s.Spec.Ports[0].Port)))
	ok, err := Serves(ctx, (&net.Dialer{}).DialContext, addr, Hosts(svc.Name, namespace)[0], ca.Bundle(), cert)
	log.Info("Checked the serving certificate a webhook Service presents", "address", addr, "servesRenewed", ok, "error", fmt.Sprint(err))
	return ok
}

// secretData reads a Secret's data; nil when it does not exist.
func secretData(ctx context.Context, r client.Reader, namespace, name string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	return s.Data, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
