package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/pflag"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/catalog/index"
)

// imageFlags are the flags of the commands that talk to registries. Credentials are docker's (see client).
type imageFlags struct {
	insecure bool
	caFile   string
}

// register adds --insecure and --ca-file to fs.
func (f *imageFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.insecure, "insecure", false, "talk plain HTTP to the registry (e.g. a registry on loopback)")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of CA certificates to trust besides the system roots (a registry with a private CA)")
}

// client is an image client with docker's credentials (authn.DefaultKeychain: $DOCKER_CONFIG or
// ~/.docker/config.json, and the credential helpers it names), the CA file and plain HTTP if asked.
func (f *imageFlags) client() (*image.Client, error) {
	opts := image.Options{Keychain: authn.DefaultKeychain, Insecure: f.insecure}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("--ca-file: %v", err)}
		}
		opts.CABundle = pem
	}
	c, err := image.NewClient(opts)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("--ca-file %s: %v; give a file of PEM certificates", f.caFile, err)}
	}
	return c, nil
}

// parseRef checks an image reference given on the command line.
func (f *imageFlags) parseRef(ref string) (name.Reference, error) {
	var opts []name.Option
	if f.insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("%s is not an image reference (%v); write it as registry.example/path/name:tag", ref, err)}
	}
	return r, nil
}

// digestRef is ref's repository at digest: the reference that names exactly what was pushed.
func digestRef(ref name.Reference, digest string) string {
	return ref.Context().Name() + "@" + digest
}

// imageError is an exit error for a registry operation on ref that failed: what failed, and what to do about it.
func imageError(ref string, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, ref) {
		msg = "image " + ref + ": " + msg
	}
	if hint := imageHint(ref, err); hint != "" {
		msg += " (" + hint + ")"
	}
	return &exitError{code: 1, msg: msg}
}

// imageHint says what to do about a failed registry operation on ref, by the error's image.Reason.
func imageHint(ref string, err error) string {
	host := "<registry>"
	if r, perr := name.ParseReference(ref, name.WeakValidation); perr == nil {
		host = r.Context().RegistryStr()
	}
	switch image.Reason(err) {
	case image.ReasonUnauthorized:
		return fmt.Sprintf("log in with `docker login %s`: almctl uses docker's credentials ($DOCKER_CONFIG or "+
			"~/.docker/config.json and its credential helpers); check the account may access %s", host, ref)
	case image.ReasonNotFound:
		return "check the reference: the repository and tag must exist (push the image first)"
	case image.ReasonTLS:
		return fmt.Sprintf("pass --ca-file with the PEM CA certificate of %s, or --insecure if it speaks plain HTTP", host)
	case image.ReasonUnreachable:
		return fmt.Sprintf("check that %s is up and its host and port are right", host)
	}
	if strings.Contains(err.Error(), "HTTP response to HTTPS client") {
		return fmt.Sprintf("%s speaks plain HTTP: pass --insecure", host)
	}
	return ""
}

// isImageRef reports whether a catalog argument names an image: a reference with a registry host (a name with a
// dot or a port, or localhost) first, so that a mistyped directory is never looked up in a registry.
func isImageRef(arg string) bool {
	host, _, ok := strings.Cut(arg, "/")
	if !ok || strings.HasPrefix(arg, ".") || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		return false
	}
	_, err := name.ParseReference(arg)
	return err == nil
}

// openCatalog opens a catalog argument: a catalog directory or File-Based Catalog file when the path exists, else
// a catalog image (pulled by digest). forRender loads it for WriteCatalog (fbc.LoadOptions.ForRender).
func (f *imageFlags) openCatalog(ctx context.Context, arg string, forRender bool) (*index.Index, error) {
	if _, err := os.Stat(arg); err == nil {
		return loadIndex(arg, fbc.LoadOptions{ForRender: forRender})
	} else if !isImageRef(arg) {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("catalog %s: %v; give a catalog directory, a File-Based Catalog file "+
			"or a catalog image reference with its registry (registry.example/catalogs/ops:latest)", arg, err)}
	}
	c, err := f.client()
	if err != nil {
		return nil, err
	}
	digest, err := c.Digest(ctx, arg)
	if err != nil {
		return nil, imageError(arg, err)
	}
	cat, err := c.PullCatalog(ctx, arg, digest)
	if err != nil {
		return nil, imageError(arg, err)
	}
	contents, err := fbc.LoadFSWith(cat.FS(), arg+":", fbc.LoadOptions{ForRender: forRender})
	_ = cat.Close() // the extracted files, under the temporary directory
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("catalog image %s: %v", arg, err)}
	}
	return index.New(index.Catalog{Name: arg, Contents: contents}), nil
}

// listProblemsCommand is the almctl command that lists every problem of a catalog argument.
func listProblemsCommand(arg string) string {
	if _, err := os.Stat(arg); err != nil && isImageRef(arg) {
		return "almctl catalog render " + arg + " >/dev/null"
	}
	return "almctl bundle validate " + arg
}
