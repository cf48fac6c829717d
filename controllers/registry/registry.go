// Package registry holds the catalogs the CatalogSource loop has loaded, as one resolvable index, for the catalog
// loops (AppType, requirements, CRD, Catalog) running in the same process.
package registry

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

// Registry is safe for concurrent use. Readers get an immutable index; a change builds a new one.
type Registry struct {
	mu      sync.Mutex
	sources map[types.NamespacedName]source
	index   *index.Index
}

type source struct {
	priority int
	contents *fbc.Contents
	digest   string
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{sources: map[types.NamespacedName]source{}, index: index.New()}
}

// Name is how a CatalogSource is named in the index and in resolution results: namespace/name.
func Name(key types.NamespacedName) string { return key.String() }

// Serves is the namespace whose objects a CatalogSource in namespace may serve: that namespace, or every namespace
// ("") when it is ALM's own namespace. Loops map a catalog change to the objects it may concern with it.
func Serves(namespace, almNamespace string) string {
	if namespace == almNamespace {
		return ""
	}
	return namespace
}

// Reference turns a catalog name from the index back into the CatalogSource it names.
func Reference(name string) *operatorsv1alpha1.CatalogReference {
	ns, n, ok := strings.Cut(name, "/")
	if !ok {
		return nil
	}
	return &operatorsv1alpha1.CatalogReference{Namespace: ns, Name: n}
}

// Set records what a CatalogSource serves. digest identifies the contents: an unchanged digest and priority keep
// the current index. It returns the index that includes the source.
func (r *Registry) Set(key types.NamespacedName, priority int, contents *fbc.Contents, digest string) *index.Index {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, known := r.sources[key]
	if known && old.digest == digest && old.priority == priority {
		return r.index
	}
	if contents == nil && known {
		contents = old.contents // unchanged contents, new priority
	}
	r.sources[key] = source{priority: priority, contents: contents, digest: digest}
	r.rebuild()
	return r.index
}

// Digest returns the digest of what the source served when last Set, and whether it is known.
func (r *Registry) Digest(key types.NamespacedName) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sources[key]
	return s.digest, ok
}

// Delete forgets a CatalogSource.
func (r *Registry) Delete(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sources[key]; ok {
		delete(r.sources, key)
		r.rebuild()
	}
}

// Index returns the current index over every loaded catalog.
func (r *Registry) Index() *index.Index {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index
}

// Catalogs returns the catalog names a resolution in namespace may use: the named source (in sourceNamespace,
// default namespace) when one is given, else every source in namespace and in ALM's own namespace.
func (r *Registry) Catalogs(namespace, source, sourceNamespace, almNamespace string) []string {
	if source != "" {
		if sourceNamespace == "" {
			sourceNamespace = namespace
		}
		return []string{Name(types.NamespacedName{Namespace: sourceNamespace, Name: source})}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for key := range r.sources {
		if key.Namespace == namespace || key.Namespace == almNamespace {
			out = append(out, Name(key))
		}
	}
	sort.Strings(out)
	return out
}

func (r *Registry) rebuild() {
	catalogs := make([]index.Catalog, 0, len(r.sources))
	for key, s := range r.sources {
		catalogs = append(catalogs, index.Catalog{Name: Name(key), Priority: s.priority, Contents: s.contents})
	}
	r.index = index.New(catalogs...)
}
