package noderunner

import (
	"context"
	"fmt"
	"time"

	"github.com/almproject/alm/test/noderunner/volumes"
)

// volumeSyncPeriod is how often a running pod's Secret and ConfigMap volumes are read again and, when their objects
// changed, rewritten in place (atomically, volumes.Write), as a kubelet's periodic volume sync does (about a minute
// there; shorter here, so that tests see a renewed certificate soon). A process that watches its files (e.g.
// controller-runtime's certwatcher) picks the new content up without a restart.
const volumeSyncPeriod = 5 * time.Second

// mounts writes the pod's Secret and ConfigMap volumes that its containers mount into the pod directory
// (volumes.Place) and returns where each mountPath is on the host, for volumes.Rewrite.
func (p *pod) mounts(ctx context.Context, deps podDeps) (map[string]string, error) {
	p.volumes = volumes.Place(&p.spec, p.dir)
	if _, err := p.writeVolumes(ctx, deps); err != nil {
		return nil, err
	}
	return volumes.Dirs(p.volumes), nil
}

// writeVolumes writes every volume of the pod that differs from its Secret or ConfigMap; it returns the mountPaths
// it rewrote.
func (p *pod) writeVolumes(ctx context.Context, deps podDeps) ([]string, error) {
	var changed []string
	for _, m := range p.volumes {
		payload, err := volumes.Payload(ctx, deps.reader, p.info.Namespace, m.Volume)
		if err != nil {
			return changed, fmt.Errorf("volume %s: %w", m.Volume.Name, err)
		}
		wrote, err := volumes.Write(m.Dir, payload)
		if err != nil {
			return changed, fmt.Errorf("volume %s: %w", m.Volume.Name, err)
		}
		if wrote {
			changed = append(changed, m.MountPath)
		}
	}
	return changed, nil
}

// syncVolumes refreshes the running pod's volumes every volumeSyncPeriod until ctx ends.
func (p *pod) syncVolumes(ctx context.Context, deps podDeps) {
	for sleepCtx(ctx, volumeSyncPeriod) {
		changed, err := p.writeVolumes(ctx, deps)
		if err != nil && ctx.Err() == nil {
			p.log.Error(err, "Refreshing the pod's volumes")
		}
		if len(changed) > 0 {
			p.log.Info("Refreshed the pod's volumes", "mountPaths", changed)
		}
	}
}
