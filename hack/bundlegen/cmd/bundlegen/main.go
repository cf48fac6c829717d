// Command bundlegen writes the registry+v1 bundles of our own operators (`make bundles`): one bundle per version in
// each input file of --input into --output/<package>/<version>/. See package github.com/almproject/alm/hack/bundlegen.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/almproject/alm/hack/bundlegen"
)

func main() {
	fs := flag.NewFlagSet("bundlegen", flag.ExitOnError)
	root := fs.String("root", ".", "Repository root; the paths in the input files are relative to it.")
	input := fs.String("input", "hack/bundles", "Directory of input files, one <package>.yaml per package.")
	output := fs.String("output", "bundles", "Directory the bundles are written to (<package>/<version>/); each package's directory is replaced.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "bundlegen writes registry+v1 bundles (manifests/ with a ClusterServiceVersion and the CRDs,\n"+
			"metadata/annotations.yaml) from hack/bundles/*.yaml and the generated CRDs and RBAC in config/.\n\nUsage: bundlegen [flags]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	dirs, err := bundlegen.Generate(*root, *input, *output)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundlegen: %v\n", err)
		os.Exit(1)
	}
	for _, d := range dirs {
		fmt.Println(d)
	}
}
