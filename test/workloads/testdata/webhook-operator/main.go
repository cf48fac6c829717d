// Command webhook-operator is a small operator whose only work is its webhooks, served the way operator-sdk
// operators serve them (controller-runtime's webhook server, its certificate from the default directory
// /tmp/k8s-webhook-server/serving-certs): it rejects a Widget named "forbidden-*", labels every Widget it admits
// with its version (mutated-by), and converts Widgets between v1 and v2, annotating them with its version
// (converted-by). The tests of test/workloads build it into an image and ALM installs it from a bundle.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var version = "dev"

func main() {
	bind := flag.String("webhook-bind-address", ":9443", "where the webhook server listens")
	reload := flag.Bool("cert-reload", true, "reload the serving certificate when its files change (controller-runtime's certwatcher); "+
		"false: read it once at start, as an operator that never reloads it")
	flag.Parse()
	host, portText, err := net.SplitHostPort(*bind)
	if err != nil {
		fail(err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		fail(err)
	}
	opts := webhook.Options{Host: host, Port: port} // CertDir: controller-runtime's default, watched by its certwatcher
	if !*reload {
		cert, err := tls.LoadX509KeyPair(filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs", "tls.crt"),
			filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs", "tls.key"))
		if err != nil {
			fail(err)
		}
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}}
	}
	srv := webhook.NewServer(opts)
	srv.Register("/validate", &admission.Webhook{Handler: admission.HandlerFunc(validate)})
	srv.Register("/mutate", &admission.Webhook{Handler: admission.HandlerFunc(mutate)})
	srv.Register("/convert", http.HandlerFunc(convert))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Printf("webhook-operator %s serving on %s (certificate reload: %t)\n", version, *bind, *reload)
	if err := srv.Start(ctx); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func validate(_ context.Context, req admission.Request) admission.Response {
	fmt.Printf("validate %s %s/%s (webhook-operator %s)\n", req.Operation, req.Namespace, req.Name, version)
	if strings.HasPrefix(req.Name, "forbidden") {
		return admission.Denied(fmt.Sprintf("webhook-operator %s forbids Widgets named forbidden-*", version))
	}
	return admission.Allowed("")
}

func mutate(_ context.Context, req admission.Request) admission.Response {
	fmt.Printf("mutate %s %s/%s (webhook-operator %s)\n", req.Operation, req.Namespace, req.Name, version)
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["mutated-by"] = "webhook-operator-" + version
	obj.SetLabels(labels)
	mutated, err := json.Marshal(obj.Object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

// convert answers a ConversionReview: each object gets the desired apiVersion (v1 and v2 have the same fields) and
// the annotation converted-by.
func convert(w http.ResponseWriter, r *http.Request) {
	review := &apiextensionsv1.ConversionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(w, "not a ConversionReview", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		fmt.Printf("convert %s/%s %s -> %s (webhook-operator %s)\n", obj.GetNamespace(), obj.GetName(), obj.GetAPIVersion(), review.Request.DesiredAPIVersion, version)
		obj.SetAPIVersion(review.Request.DesiredAPIVersion)
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["converted-by"] = "webhook-operator-" + version
		obj.SetAnnotations(annotations)
		data, _ := json.Marshal(obj.Object)
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: data})
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}
