package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/discovery"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// apiServerRetry is how often ALM asks again for an API server that did not answer at start.
const apiServerRetry = time.Second

// waitForAPIServer returns once the API server answers discovery as ALM's user, or when ctx ends. The manager needs
// discovery to start (its cache asks which kinds are namespaced): without the wait, an ALM started while the API
// server is away (restarted, or not yet reachable through the kubernetes Service) exits, and the kubelet starts it
// again only after a crash-loop backoff that doubles up to 5 minutes, long after the API server is back.
func waitForAPIServer(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	lastLog := time.Time{}
	for {
		_, err := dc.ServerGroups()
		if err == nil {
			if !lastLog.IsZero() {
				log.Info("The API server answers", "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if time.Since(lastLog) >= 10*time.Second {
			log.Info("Waiting for the API server", "host", cfg.Host, "waited", time.Since(start).Round(time.Second).String(), "error", err.Error())
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API server at %s did not answer: %w", cfg.Host, err)
		case <-time.After(apiServerRetry):
		}
	}
}

// leaderIdentity is who holds ALM's leader election Lease: $POD_NAME, set from the downward API by config/manager,
// so that ALM restarted in its pod (after a crash, or after losing the Lease while the API server was away) holds
// the Lease again at once instead of waiting for the previous holder's to run out. The kubelet never runs a
// container twice at once in one pod, and Deployment pods have unique names, so two ALMs never share it. Elsewhere
// (e.g. two processes on one host) it is controller-runtime's: the host name and a random suffix.
func leaderIdentity() (string, error) {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// leaderLock is the Lease lock controller-runtime would make, with leaderIdentity's identity.
func leaderLock(cfg *rest.Config, namespace, name string) (resourcelock.Interface, error) {
	id, err := leaderIdentity()
	if err != nil {
		return nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// As controller-runtime does: one hung request must not use up the renew deadline (10s).
	cfg.Timeout = 5 * time.Second
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	coordination, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, core, coordination,
		resourcelock.ResourceLockConfig{Identity: id})
}
