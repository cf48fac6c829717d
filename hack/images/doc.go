// Package images builds ALM's container images without Docker (`make images`) and pushes them (`make push`), with
// go-containerregistry: a static linux binary on an empty base, the Mozilla CA roots and a non-root user.
//
// # The contract
//
// What the local environment (test/localenv pushes the archives to the registry its node pulls from), `docker load`
// and `kind load image-archive` rely on:
//
//   - Every image is one archive bin/images/<name>-<version>.tar (e.g. bin/images/konnect-operator-1.1.0.tar) in the
//     docker-save tarball format, written by tarball.MultiRefWriteToFile: manifest.json lists the image with its
//     RepoTags, and tarball.ImageFromPath(path, &tag) opens it. Each archive holds exactly one image with exactly
//     one tag; look images up by RepoTag, not by file name.
//   - Tags: alm.local/alm:<alm version>, alm.local/konnect-operator:<v> for every version in
//     hack/bundles/konnect-operator.yaml (the image the bundle of that version names), alm.local/gateway-config:<v>
//     likewise. Each archive's binary is built for that version (-X main.version=<v>).
//   - The entrypoint is exactly one absolute path, /<name> (/alm, /konnect-operator, /gateway-config), with no Cmd:
//     a Deployment's args follow it. The file at that path is a static (CGO_ENABLED=0) linux/<GOARCH> executable
//     built with -trimpath, runnable on the host as a process. The image's layers also hold
//     /etc/ssl/certs/ca-certificates.crt (Env SSL_CERT_FILE points to it), /etc/passwd and /etc/group with the user
//     nonroot (65532), and /tmp.
//   - Config: User "65532:65532", WorkingDir "/", Env PATH=/ and SSL_CERT_FILE, OS linux, Architecture GOARCH,
//     labels org.opencontainers.image.{title,version,source,revision}, created at SOURCE_DATE_EPOCH (default the
//     Unix epoch): the same sources and commit give the same digests.
//   - The docker-save format stores no manifest: an image read from an archive has a Docker schema 2 manifest
//     (gzip layers). The images are built with the same media types, so the digest printed by `make images` is the
//     digest `make push` sends and a registry serves.
package images
