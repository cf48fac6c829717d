package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/image"
)

func newBundlePushCommand() *cobra.Command {
	var img imageFlags
	cmd := &cobra.Command{
		Use:   "push DIR REF",
		Short: "Validate a bundle directory and push it as a registry+v1 bundle image",
		Long: "Validate the registry+v1 bundle in DIR exactly as `almctl bundle validate` does, then build its bundle image in\n" +
			"OLM's format (manifests/ and metadata/ in one layer, the annotations of metadata/annotations.yaml as labels;\n" +
			"opm and OLM read it) and push it to REF. Problems go to stderr; an error refuses the push (exit 1) and nothing\n" +
			"is pushed. On success stdout is the pushed image by digest, REPO@sha256:…, the reference to put in a catalog.\n\n" +
			"Credentials are docker's: `docker login <registry>` ($DOCKER_CONFIG or ~/.docker/config.json, credential\n" +
			"helpers). The same directory always builds the same image (same digest).",
		Example: "  almctl bundle push bundles/konnect-operator/1.2.0 registry.example/bundles/konnect-operator:1.2.0\n" +
			"  # stdout: registry.example/bundles/konnect-operator@sha256:…\n" +
			"  almctl bundle push --insecure bundles/konnect-operator/1.2.0 127.0.0.1:5000/bundles/konnect-operator:1.2.0",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, ref := args[0], args[1]
			r, err := img.parseRef(ref)
			if err != nil {
				return err
			}
			if !isBundleDir(dir) {
				return &exitError{code: 1, msg: fmt.Sprintf("%s is not a bundle directory (manifests/ and metadata/annotations.yaml); "+
					"a catalog is pushed with `almctl catalog push`", dir)}
			}
			b, problems := bundle.Load(dir)
			printProblems(cmd.ErrOrStderr(), problems)
			if b == nil {
				return &exitError{code: 1, msg: fmt.Sprintf("bundle %s has errors (above); nothing pushed", dir)}
			}
			c, err := img.client()
			if err != nil {
				return err
			}
			bundleImg, err := image.BundleImage(dir)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			digest, err := c.Push(cmd.Context(), bundleImg, ref)
			if err != nil {
				return imageError(ref, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), digestRef(r, digest))
			return nil
		},
	}
	img.register(cmd.Flags())
	return cmd
}
