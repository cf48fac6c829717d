package noderunner

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mounts writes the pod's Secret and ConfigMap volumes that its containers mount into the pod directory, as a
// kubelet would (all keys, or the listed items, read when the pod starts), and returns where each mountPath is on
// the host. A process runs on the host's filesystem, so a mountPath under /tmp is placed under the pod's own TMPDIR
// (<pod>/tmp, which every process gets as TMPDIR: a program that finds its files through os.TempDir(), such as
// controller-runtime's webhook server in /tmp/k8s-webhook-server/serving-certs, reads them there), and any other under
// <pod>/root; args and env values that name a mountPath are rewritten to the host directory (rewriteMounts).
func (p *pod) mounts(ctx context.Context, reader client.Reader) (map[string]string, error) {
	byName := map[string]corev1.Volume{}
	for _, v := range p.spec.Volumes {
		byName[v.Name] = v
	}
	out := map[string]string{}
	for _, c := range p.spec.Containers {
		for _, m := range c.VolumeMounts {
			v, ok := byName[m.Name]
			if !ok || (v.Secret == nil && v.ConfigMap == nil) {
				continue // other volume kinds are not mounted
			}
			mountPath := path.Clean("/" + m.MountPath)
			dir := p.hostMountDir(mountPath)
			if _, done := out[mountPath]; done {
				continue
			}
			if err := p.writeVolume(ctx, reader, v, dir); err != nil {
				return nil, fmt.Errorf("container %s: volume %s: %w", c.Name, v.Name, err)
			}
			out[mountPath] = dir
		}
	}
	return out, nil
}

func (p *pod) hostMountDir(mountPath string) string {
	if rest, ok := strings.CutPrefix(mountPath, "/tmp/"); ok {
		return filepath.Join(p.dir, "tmp", filepath.FromSlash(rest))
	}
	return filepath.Join(p.dir, "root", filepath.FromSlash(mountPath))
}

// writeVolume writes a Secret's or ConfigMap's keys (or items) as files into dir.
func (p *pod) writeVolume(ctx context.Context, reader client.Reader, v corev1.Volume, dir string) error {
	data := map[string][]byte{}
	var items []corev1.KeyToPath
	optional := false
	key := types.NamespacedName{Namespace: p.info.Namespace}
	var err error
	if v.Secret != nil {
		key.Name, items, optional = v.Secret.SecretName, v.Secret.Items, ptrOr(v.Secret.Optional, false)
		s := &corev1.Secret{}
		if err = reader.Get(ctx, key, s); err == nil {
			data = s.Data
		}
	} else {
		key.Name, items, optional = v.ConfigMap.Name, v.ConfigMap.Items, ptrOr(v.ConfigMap.Optional, false)
		cm := &corev1.ConfigMap{}
		if err = reader.Get(ctx, key, cm); err == nil {
			for k, val := range cm.Data {
				data[k] = []byte(val)
			}
		}
	}
	if err != nil && !(optional && client.IgnoreNotFound(err) == nil) {
		return err
	}
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, it := range items {
		val, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %q", key, it.Key)
		}
		file := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+it.Path)))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, val, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// rewriteMounts maps a value that is a mountPath, or a path under one, to the host.
func rewriteMounts(value string, mounts map[string]string) string {
	if flag, v, ok := strings.Cut(value, "="); ok && strings.HasPrefix(flag, "-") { // --cert-dir=/path
		return flag + "=" + rewriteMounts(v, mounts)
	}
	for mountPath, dir := range mounts {
		if value == mountPath {
			return dir
		}
		if rest, ok := strings.CutPrefix(value, mountPath+"/"); ok {
			return filepath.Join(dir, rest)
		}
	}
	return value
}
