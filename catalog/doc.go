// Package catalog holds nothing but this description: the catalog is a set of pure libraries, one package per
// concern, that load, validate, index and resolve operator bundles. They read files, File-Based Catalog documents
// and ConfigMap objects handed to them and never talk to an API server (none imports controller-runtime).
//
//   - catalog/bundle: one registry+v1 bundle directory, loaded, normalized (CRDs to v1) and validated; Problem,
//     the rules and their severities, which every other catalog package reports.
//   - catalog/policy: the hostile-input policy the catalog and the installer share (wildcard and escalating RBAC,
//     cluster-admin bindings, privileged pods, CRDs in Kubernetes' groups) and the one list of installable kinds.
//   - catalog/fbc: File-Based Catalog documents and catalog directories (bundle directories and FBC files) read into
//     Contents; File-Based Catalogs written.
//   - catalog/configmap: the ConfigMap publish format of a bundle (`almctl publish`).
//   - catalog/migrate: package-manifest catalogs converted to registry+v1 bundle directories.
//   - catalog/index: the index of one or more catalogs, the one upgrade rule, the resolver, the CatalogSource status
//     summary, the upgrade graph as Mermaid, and the rendering of a catalog as a File-Based Catalog.
//
// The flow is:
//
//	contents, err := fbc.LoadDir(dir)                // bundles (registry+v1) and File-Based Catalog files
//	contents := configmap.Load(cms)                  // bundles stored by `almctl publish`
//	ix := index.New(index.Catalog{Name: "ops", Priority: 0, Contents: contents}, ...)
//	result, err := ix.Resolve(index.Request{Package: "etcd", Channel: "alpha", From: "0.9.2"})
//	fmt.Print(result.Explain())
//
// Bad input never fails a load: every problem is a bundle.Problem (path, rule, detail, hint, severity). An error
// excludes only the bundle it is about; a warning never excludes anything. Index.Problems lists them all.
package catalog
