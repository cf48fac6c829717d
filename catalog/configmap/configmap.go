// Package configmap is the ConfigMap publish format of bundles: Encode encodes a bundle directory as one
// ConfigMap (what `almctl publish` writes), Decode and Load decode and validate them.
package configmap

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
)

// ConfigMap encoding of a bundle (see README.md).
const (
	// Key is the binaryData key holding the bundle: a gzip-compressed tar of manifests/ and metadata/.
	Key = "bundle.tar.gz"
	// LabelPackage is the package of the bundle in the ConfigMap (when it is a valid label value).
	LabelPackage = "operators.alm.dev/package"
	// AnnotationPackage, AnnotationBundle and AnnotationVersion name the bundle in the ConfigMap.
	AnnotationPackage = "operators.alm.dev/package"
	AnnotationBundle  = "operators.alm.dev/bundle"
	AnnotationVersion = "operators.alm.dev/version"
	// AnnotationDigest is "sha256:<hex>" of the uncompressed tar: equal content, equal digest.
	AnnotationDigest = "operators.alm.dev/digest"
	// DeprecationsKey is the data key of a catalog's deprecations ConfigMap: olm.deprecations documents (YAML or
	// JSON), as a File-Based Catalog or a directory catalog's deprecations.yaml holds them. Such a ConfigMap carries
	// the catalog label like the bundle ConfigMaps, and no bundle.
	DeprecationsKey = "deprecations.yaml"
	// MaxData is the most a ConfigMap's data and binaryData may hold together.
	MaxData = 1 << 20
)

// Encode encodes the bundle directory dir as a ConfigMap of the catalog in namespace. The encoding is
// deterministic: the same files give the same ConfigMap, so publishing twice changes nothing. The bundle must have
// loaded without errors (use bundle.Load first); b names it.
func Encode(b *bundle.Bundle, dir, catalog, namespace string) (*corev1.ConfigMap, error) {
	files, size, err := bundle.Files(dir)
	if err != nil {
		return nil, err
	}
	if size > bundle.MaxBundleSize {
		return nil, fmt.Errorf("%s: bundle is %d bytes, more than %d", bundle.RuleBundleTooLarge, size, bundle.MaxBundleSize)
	}
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if gz.Len() > MaxData {
		return nil, fmt.Errorf("%s: the compressed bundle is %d bytes, more than a ConfigMap holds (%d)", bundle.RuleConfigMapTooLarge, gz.Len(), MaxData)
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name(catalog, b.Name),
			Namespace: namespace,
			Labels:    map[string]string{almv1alpha1.LabelCatalog: catalog},
			Annotations: map[string]string{
				AnnotationPackage: b.Package,
				AnnotationBundle:  b.Name,
				AnnotationVersion: b.Version.String(),
				AnnotationDigest:  "sha256:" + hex.EncodeToString(sum[:]),
			},
		},
		BinaryData: map[string][]byte{Key: gz.Bytes()},
	}
	if len(validation.IsValidLabelValue(b.Package)) == 0 {
		cm.Labels[LabelPackage] = b.Package
	}
	return cm, nil
}

// Name is the name of the ConfigMap holding a bundle of a catalog: "<catalog>-<bundle>", shortened with a
// hash when longer than a name may be.
func Name(catalog, bundleName string) string {
	name := strings.ToLower(catalog + "-" + bundleName)
	if len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:validation.DNS1123SubdomainMaxLength-17] + "-" + hex.EncodeToString(sum[:8])
}

// Path is how problems name a ConfigMap: configmap/<namespace>/<name>.
func Path(cm *corev1.ConfigMap) string {
	return "configmap/" + cm.Namespace + "/" + cm.Name
}

// maxTarSize bounds what a ConfigMap bundle may decompress to: its files (bundle.MaxBundleSize) and their tar headers.
const maxTarSize = 4 * bundle.MaxBundleSize

// Decode decodes and validates a bundle stored by Encode. It unpacks the files into a temporary directory (removed
// before it returns) so the operator-framework loader reads them as on disk.
func Decode(cm *corev1.ConfigMap) (*bundle.Bundle, []bundle.Problem) {
	where := Path(cm)
	fail := func(rule, hint, format string, args ...any) (*bundle.Bundle, []bundle.Problem) {
		p := bundle.Errorf(where, rule, hint, format, args...)
		p.Package, p.Bundle = cm.Annotations[AnnotationPackage], cm.Annotations[AnnotationBundle]
		return nil, []bundle.Problem{p}
	}
	data, ok := cm.BinaryData[Key]
	if !ok {
		return fail(bundle.RuleConfigMap, "publish bundles with `almctl publish`", "no binaryData key %s", Key)
	}
	if len(data) > MaxData {
		return fail(bundle.RuleConfigMapTooLarge, "a bundle must fit in one ConfigMap", "%s is %d bytes, more than the %d a ConfigMap holds", Key, len(data), MaxData)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fail(bundle.RuleConfigMap, "republish the bundle", "%s is not gzip data: %v", Key, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxTarSize+1))
	if err != nil {
		return fail(bundle.RuleConfigMap, "republish the bundle", "%s: %v", Key, err)
	}
	if len(raw) > maxTarSize {
		return fail(bundle.RuleBundleTooLarge, "a bundle must fit in one ConfigMap", "%s decompresses to more than %d bytes", Key, maxTarSize)
	}
	if want := cm.Annotations[AnnotationDigest]; want != "" {
		sum := sha256.Sum256(raw)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			return fail(bundle.RuleConfigMap, "republish the bundle with --force", "content digest %s does not match annotation %s", got, want)
		}
	}
	tmp, err := os.MkdirTemp("", "alm-bundle-")
	if err != nil {
		return fail(bundle.RuleLoadFailed, "", "%v", err)
	}
	defer os.RemoveAll(tmp)
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(bundle.RuleConfigMap, "republish the bundle", "bad tar: %v", err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(name, "..") || path.IsAbs(name) ||
			!(strings.HasPrefix(name, "manifests/") || strings.HasPrefix(name, "metadata/")) {
			return fail(bundle.RuleConfigMap, "republish the bundle", "unexpected tar entry %q: a bundle ConfigMap holds regular files under manifests/ and metadata/ only", h.Name)
		}
		target := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fail(bundle.RuleLoadFailed, "", "%v", err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return fail(bundle.RuleConfigMap, "republish the bundle", "bad tar: %v", err)
		}
		if err := os.WriteFile(target, content, 0o644); err != nil {
			return fail(bundle.RuleLoadFailed, "", "%v", err)
		}
	}
	b, problems := bundle.LoadInMemory(tmp, where)
	if b != nil {
		b.Path = where
	}
	return b, problems
}

// Load decodes every bundle ConfigMap of a catalog (the caller lists them by the label
// operators.alm.dev/catalog=<name>) and the olm.deprecations of its deprecations ConfigMaps (DeprecationsKey). Bad
// ConfigMaps become problems. The result is in ConfigMap name order.
func Load(cms []corev1.ConfigMap) *fbc.Contents {
	sorted := make([]*corev1.ConfigMap, len(cms))
	for i := range cms {
		sorted[i] = &cms[i]
	}
	sort.Slice(sorted, func(i, j int) bool { return Path(sorted[i]) < Path(sorted[j]) })
	c := &fbc.Contents{}
	for _, cm := range sorted {
		if data, ok := cm.Data[DeprecationsKey]; ok && cm.BinaryData[Key] == nil {
			docs := fbc.Load(strings.NewReader(data), Path(cm))
			c.Deprecations, c.Problems = append(c.Deprecations, docs.Deprecations...), append(c.Problems, docs.Problems...)
			continue
		}
		b, problems := Decode(cm)
		if b != nil {
			c.Bundles = append(c.Bundles, b)
		}
		c.Problems = append(c.Problems, problems...)
	}
	return c
}
