package noderunner

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// readyAfter is how long a container without a readiness probe (or with one the runner cannot run, e.g. exec) must
// run before it counts as ready.
const readyAfter = time.Second

// prober checks a container's readiness with its probe's timing.
type prober struct {
	initialDelay     time.Duration
	period           time.Duration
	successThreshold int
	failureThreshold int
	// check reports nil when the container is ready.
	check func(ctx context.Context) error
}

// readinessProber is the container's readinessProbe; without one (or with an exec probe) the container is ready
// once it has run for readyAfter.
func readinessProber(spec *corev1.Container, ports map[int32]int32) prober {
	if pr := newProber(spec.ReadinessProbe, spec.Ports, ports); pr != nil {
		return *pr
	}
	return prober{initialDelay: readyAfter, period: time.Hour, successThreshold: 1, failureThreshold: 1,
		check: func(context.Context) error { return nil }}
}

// livenessProber is the container's livenessProbe, nil when it has none the runner can run.
func livenessProber(spec *corev1.Container, ports map[int32]int32) *prober {
	return newProber(spec.LivenessProbe, spec.Ports, ports)
}

// newProber turns an httpGet or tcpSocket probe into a prober that checks the pod's mapped loopback port; nil for
// no probe or an exec or grpc probe.
func newProber(p *corev1.Probe, declared []corev1.ContainerPort, ports map[int32]int32) *prober {
	if p == nil || (p.HTTPGet == nil && p.TCPSocket == nil) {
		return nil
	}
	pr := &prober{
		initialDelay:     time.Duration(p.InitialDelaySeconds) * time.Second,
		period:           secondsOr(p.PeriodSeconds, 10),
		successThreshold: int(max(p.SuccessThreshold, 1)),
		failureThreshold: int(max(p.FailureThreshold, 1)),
	}
	if p.FailureThreshold == 0 {
		pr.failureThreshold = 3
	}
	timeout := secondsOr(p.TimeoutSeconds, 1)
	if p.HTTPGet != nil {
		pr.check = httpCheck(p.HTTPGet, hostPort(p.HTTPGet.Port, declared, ports), timeout)
	} else {
		addr := net.JoinHostPort(podIP, strconv.Itoa(int(hostPort(p.TCPSocket.Port, declared, ports))))
		pr.check = func(ctx context.Context) error {
			conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", addr)
			if err == nil {
				_ = conn.Close()
			}
			return err
		}
	}
	return pr
}

func secondsOr(s, def int32) time.Duration {
	if s <= 0 {
		s = def
	}
	return time.Duration(s) * time.Second
}

// hostPort resolves a probe's port (a number or a containerPort's name) to the pod's host port; a port that is not
// declared is used as is.
func hostPort(port intstr.IntOrString, declared []corev1.ContainerPort, ports map[int32]int32) int32 {
	n := port.IntVal
	if port.Type == intstr.String {
		for _, cp := range declared {
			if cp.Name == port.StrVal {
				n = cp.ContainerPort
			}
		}
	}
	if hp, ok := ports[n]; ok {
		return hp
	}
	return n
}

func httpCheck(get *corev1.HTTPGetAction, port int32, timeout time.Duration) func(context.Context) error {
	scheme := "http"
	if get.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	path := get.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(podIP, strconv.Itoa(int(port))), path)
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		// A kubelet does not verify a probe's certificate either.
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true,
	}}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for _, h := range get.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
		}
		return nil
	}
}
