// Package catalog loads, validates, indexes and resolves operator bundles. It is a pure library: it reads files,
// File-Based Catalog documents and ConfigMap objects handed to it, and never talks to an API server.
//
// The flow is:
//
//	contents := catalog.LoadDir(dir)                  // bundles (registry+v1) and File-Based Catalog files
//	contents := catalog.LoadConfigMaps(cms)            // bundles stored by `almctl publish`
//	index := catalog.NewIndex(catalog.Catalog{Name: "ops", Priority: 0, Contents: contents}, ...)
//	result, err := index.Resolve(catalog.Request{Package: "etcd", Channel: "alpha", From: "0.9.2"})
//	fmt.Print(result.Explain())
//
// Bad input never fails a load: every problem is a Problem (path, rule, detail, hint, severity). An error excludes
// only the bundle it is about; a warning never excludes anything. Index.Problems lists them all.
package catalog
