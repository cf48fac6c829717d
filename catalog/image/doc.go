// Package image pulls, builds and pushes the two kinds of OCI images ALM deals with: File-Based Catalog (FBC)
// images and registry+v1 bundle images, in the formats OLM and opm use.
//
// Pulling is for the catalog loop and the installer: a Client asks a registry only for a manifest digest when it
// polls (Digest), pulls a catalog image by digest into memory (PullCatalog) and a bundle image by digest into a
// bundle directory on disk (PullBundle); a BundleCache keeps a bounded number of unpacked bundles by digest.
// Everything read from a registry is hostile until checked: sizes, entry counts, names, links and entry types are
// bounded by Limits and refused with a *RefusedError that names the image, the layer, the tar entry and the rule,
// and Reason classifies any pull error for a status condition.
//
// Building and pushing is for almctl: BundleImage and CatalogImage make deterministic images from a bundle
// directory and from FBC files, and Push writes one to a registry.
//
// The package depends on no other package of this repository.
package image
