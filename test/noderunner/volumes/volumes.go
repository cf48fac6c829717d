// Package volumes places a pod's Secret and ConfigMap volumes on the host as a kubelet does: where each mountPath
// goes (Place), what a volume holds (Payload), and writing it atomically (Write), so that the runner can refresh a
// running pod's volumes when their Secrets or ConfigMaps change, as a kubelet's periodic volume sync does.
package volumes

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Mount is a Secret or ConfigMap volume of a pod and the host directory that stands for its mountPath.
type Mount struct {
	Volume    corev1.Volume
	MountPath string
	Dir       string
}

// Place returns the Secret and ConfigMap volumes spec's containers mount (once per mountPath; other volume kinds
// are not mounted) and where each is on the host. A process runs on the host's filesystem, so a mountPath under
// /tmp is placed under the pod's own TMPDIR (<podDir>/tmp, which every process gets as TMPDIR: a program that finds
// its files through os.TempDir(), such as controller-runtime's webhook server in
// /tmp/k8s-webhook-server/serving-certs, reads them there), and any other under <podDir>/root; args and env values
// that name a mountPath are rewritten to the host directory (Rewrite).
func Place(spec *corev1.PodSpec, podDir string) []Mount {
	byName := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		byName[v.Name] = v
	}
	var out []Mount
	seen := map[string]bool{}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			v, ok := byName[m.Name]
			if !ok || (v.Secret == nil && v.ConfigMap == nil) {
				continue
			}
			mountPath := path.Clean("/" + m.MountPath)
			if seen[mountPath] {
				continue
			}
			seen[mountPath] = true
			out = append(out, Mount{Volume: v, MountPath: mountPath, Dir: hostDir(podDir, mountPath)})
		}
	}
	return out
}

func hostDir(podDir, mountPath string) string {
	if rest, ok := strings.CutPrefix(mountPath, "/tmp/"); ok {
		return filepath.Join(podDir, "tmp", filepath.FromSlash(rest))
	}
	return filepath.Join(podDir, "root", filepath.FromSlash(mountPath))
}

// Dirs maps each mount's mountPath to its host directory, for Rewrite.
func Dirs(mounts []Mount) map[string]string {
	out := map[string]string{}
	for _, m := range mounts {
		out[m.MountPath] = m.Dir
	}
	return out
}

// Payload reads what volume v of a pod in namespace holds: each of its Secret's or ConfigMap's keys (or the listed
// items) by the relative path it has in the volume. An optional volume whose object does not exist is empty.
func Payload(ctx context.Context, reader client.Reader, namespace string, v corev1.Volume) (map[string][]byte, error) {
	data := map[string][]byte{}
	var items []corev1.KeyToPath
	optional := false
	key := types.NamespacedName{Namespace: namespace}
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
		return nil, err
	}
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	out := map[string][]byte{}
	for _, it := range items {
		val, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("%s has no key %q", key, it.Key)
		}
		out[strings.TrimPrefix(path.Clean("/"+it.Path), "/")] = val
	}
	return out, nil
}

// Rewrite maps a value that is a mountPath, or a path under one, to the host (dirs: Dirs).
func Rewrite(value string, dirs map[string]string) string {
	if flag, v, ok := strings.Cut(value, "="); ok && strings.HasPrefix(flag, "-") { // --cert-dir=/path
		return flag + "=" + Rewrite(v, dirs)
	}
	for mountPath, dir := range dirs {
		if value == mountPath {
			return dir
		}
		if rest, ok := strings.CutPrefix(value, mountPath+"/"); ok {
			return filepath.Join(dir, rest)
		}
	}
	return value
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
