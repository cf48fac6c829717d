package noderunner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serveServices plays kube-proxy for kube-apiserver: on the Unix socket it accepts HTTP CONNECT <cluster IP>:<port>
// (what kube-apiserver's egress selector sends for a webhook's Service) and connects it to a ready pod of that
// Service on its mapped loopback port. It returns once it listens; the listener closes when ctx ends.
func (r *Runner) serveServices(ctx context.Context, socket string) error {
	_ = os.Remove(socket) // a socket left by an earlier runner
	l, err := (&net.ListenConfig{}).Listen(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("noderunner: listening for Service traffic on %s: %w", socket, err)
	}
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go r.proxy(ctx, conn)
		}
	}()
	return nil
}

// proxy serves one CONNECT.
func (r *Runner) proxy(ctx context.Context, conn net.Conn) {
	defer func() { _ = conn.Close() }()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		_, _ = io.WriteString(conn, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return
	}
	addr, err := r.serviceBackend(ctx, req.Host)
	if err != nil {
		r.log.Info("Service connection refused", "address", req.Host, "reason", err.Error())
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\n\r\n")
		return
	}
	backend, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer func() { _ = backend.Close() }()
	r.log.V(1).Info("Service connection", "address", req.Host, "backend", addr)
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(backend, br) // what the client sent after the CONNECT may already be buffered
		if c, ok := backend.(*net.TCPConn); ok {
			_ = c.CloseWrite()
		}
	})
	_, _ = io.Copy(conn, backend)
	_ = conn.Close()
	wg.Wait()
}

// serviceBackend resolves <cluster IP>:<port> to the loopback address of a ready pod of the Service that has this
// cluster IP and port: a pod of a Deployment in the Service's namespace whose labels the selector matches, on the
// host port of the container port the Service's targetPort names.
func (r *Runner) serviceBackend(ctx context.Context, hostport string) (string, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		return "", err
	}
	list, err := r.deps.clientset.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for i := range list.Items {
		svc := &list.Items[i]
		if svc.Spec.ClusterIP != host || len(svc.Spec.Selector) == 0 {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if int64(sp.Port) == port {
				return r.podAddress(svc, sp.TargetPort)
			}
		}
	}
	return "", fmt.Errorf("no Service with cluster IP %s and port %d", host, port)
}

// podAddress picks a ready pod of svc at random and returns its loopback address for target.
func (r *Runner) podAddress(svc *corev1.Service, target intstr.IntOrString) (string, error) {
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	r.mu.Lock()
	var candidates []string
	for key, pods := range r.deployments {
		if key.Namespace != svc.Namespace {
			continue
		}
		for _, p := range pods {
			if !selector.Matches(labels.Set(p.info.Labels)) || !p.state().Ready || p.state().Terminating {
				continue
			}
			if hp, ok := p.targetPort(target); ok {
				candidates = append(candidates, net.JoinHostPort(podIP, strconv.Itoa(int(hp))))
			}
		}
	}
	r.mu.Unlock()
	if len(candidates) == 0 {
		return "", errors.New("no ready pod of Service " + svc.Namespace + "/" + svc.Name)
	}
	return candidates[rand.IntN(len(candidates))], nil
}

// targetPort maps a Service's targetPort (a number or a containerPort's name) to the pod's host port.
func (p *pod) targetPort(target intstr.IntOrString) (int32, bool) {
	want := target.IntVal
	if target.Type == intstr.String {
		want = 0
		for _, c := range p.spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == target.StrVal {
					want = cp.ContainerPort
				}
			}
		}
	}
	hp, ok := p.ports[want]
	return hp, ok
}

// ServiceDialer dials Services through a runner's ServiceSocket, as kube-apiserver's egress selector does: addr is
// <cluster IP>:<port>, and the connection reaches a ready pod of that Service. Tests and ALM's served-certificate
// check (loops.Options.DialService) reach webhooks with it.
func ServiceDialer(socket string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", socket)
		if err != nil {
			return nil, err
		}
		if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr); err != nil {
			_ = conn.Close()
			return nil, err
		}
		// Nothing follows the response until the client speaks; its "body" is the tunnel, so it is not read.
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect}) //nolint:bodyclose // the body is the tunnel
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			_ = conn.Close()
			return nil, fmt.Errorf("connecting to Service %s: %s", addr, resp.Status)
		}
		return conn, nil
	}
}
