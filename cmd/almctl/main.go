// Command almctl validates, renders, resolves and publishes operator bundles for ALM.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/index"
)

// exitError carries an exit code; its message (if any) is printed to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	root := newRootCommand(os.Stdout, os.Stderr)
	if filepath.Base(os.Args[0]) == "kubectl-alm" {
		root.Use = "kubectl alm" // run by kubectl's plugin discovery: usage lines say how it was called
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "almctl: "+ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "almctl: "+err.Error())
		os.Exit(1)
	}
}

// verbose is the root --verbose flag.
var verbose bool

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "almctl",
		Short: "Validate, render, resolve and publish operator bundles for ALM, and show what a cluster runs",
		Long: "almctl works with OLM registry+v1 bundles and File-Based Catalogs: validate bundles, render a directory of\n" +
			"bundles as a File-Based Catalog, resolve and graph upgrades, publish bundles to a ConfigMap catalog, and push\n" +
			"bundles and catalogs as images in OLM's format to any OCI registry (docker's credentials).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addKubeFlags(root)
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "list every problem, including the one-line summaries (bundles without spec.minKubeVersion)")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true

	bundle := &cobra.Command{Use: "bundle", Short: "Work with single bundles"}
	bundle.AddCommand(newValidateCommand(), newBundlePushCommand(), newBundleDiffCommand())
	cat := &cobra.Command{Use: "catalog", Short: "Work with a catalog: a directory (bundle directories and File-Based Catalog files) or a catalog image"}
	cat.AddCommand(newRenderCommand(), newResolveCommand(), newGraphCommand(), newMigrateCommand(), newCatalogPushCommand())
	root.AddCommand(bundle, cat, newPublishCommand(), newStatusCommand(), newUpgradeCommand())
	root.AddCommand(newReferenceCommand(root))
	return root
}

func newValidateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate DIR...",
		Short: "Validate bundle directories (or catalog directories)",
		Long: "Validate each DIR: a registry+v1 bundle directory (manifests/ and metadata/annotations.yaml) or a catalog\n" +
			"directory of bundles and File-Based Catalog files. Prints one line per problem, `path: rule: detail`\n" +
			"(warnings say `warning:` and never fail). Exit code 0 when there are no errors, 1 otherwise.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := false
			for _, dir := range args {
				var problems []bundle.Problem
				if isBundleDir(dir) {
					_, problems = bundle.Load(dir)
				} else {
					contents, err := fbc.LoadDir(dir)
					if err != nil {
						return &exitError{code: 1, msg: err.Error()}
					}
					problems = index.New(index.Catalog{Name: dir, Contents: contents}).Problems()
				}
				printProblems(cmd.OutOrStdout(), problems)
				failed = failed || bundle.HasErrors(problems)
			}
			if failed {
				return &exitError{code: 1}
			}
			return nil
		},
	}
}

func isBundleDir(dir string) bool {
	if fi, err := os.Stat(dir + "/manifests"); err == nil && fi.IsDir() {
		return true
	}
	_, err := os.Stat(dir + "/metadata/annotations.yaml")
	return err == nil
}

// loadIndex loads a catalog directory.
func loadIndex(dir string, opts ...fbc.LoadOptions) (*index.Index, error) {
	var o fbc.LoadOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	contents, err := fbc.LoadDirWith(dir, o)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	return index.New(index.Catalog{Name: dir, Contents: contents}), nil
}

// quietRules are warnings nearly every real bundle has; they are summed up in one line unless --verbose.
var quietRules = map[string]string{
	bundle.RuleMinKubeVersion: "do not set spec.minKubeVersion",
}

// printProblems prints one line per problem; warnings of quietRules get one summary line each unless --verbose.
func printProblems(w io.Writer, problems []bundle.Problem) {
	quiet := map[string]int{}
	for _, p := range problems {
		if _, ok := quietRules[p.Rule]; ok && !verbose && !p.IsError() {
			quiet[p.Rule]++
			continue
		}
		fmt.Fprintln(w, strings.ReplaceAll(p.String(), "\n", " "))
	}
	for _, rule := range sortedRules(quiet) {
		fmt.Fprintf(w, "%d bundles %s (%s: warning; -v lists them)\n", quiet[rule], quietRules[rule], rule)
	}
}

func sortedRules(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printPackageProblems prints the problems of one package, then one line counting the others in the catalog and
// the command that lists them.
func printPackageProblems(w io.Writer, dir, pkg string, problems []bundle.Problem) {
	var mine []bundle.Problem
	otherErrors, otherWarnings := 0, 0
	for _, p := range problems {
		switch {
		case p.Package == pkg:
			mine = append(mine, p)
		case p.IsError():
			otherErrors++
		default:
			otherWarnings++
		}
	}
	printProblems(w, mine)
	if otherErrors+otherWarnings > 0 {
		fmt.Fprintf(w, "the rest of the catalog has %d errors and %d warnings (%s lists them)\n", otherErrors, otherWarnings, listProblemsCommand(dir))
	}
}

func newRenderCommand() *cobra.Command {
	var output string
	var img imageFlags
	cmd := &cobra.Command{
		Use:   "render DIR|REF",
		Short: "Render a catalog directory or catalog image as a File-Based Catalog on stdout",
		Long: "Render the bundles and File-Based Catalog files in DIR as one File-Based Catalog (olm.package, olm.channel,\n" +
			"olm.bundle with olm.bundle.object properties; CRDs normalized to apiextensions.k8s.io/v1) on stdout.\n" +
			"A REF that is not an existing path but an image reference with a registry host is pulled as a catalog image\n" +
			"(by digest, docker's credentials) and its File-Based Catalog is rendered the same way (bundles keep their\n" +
			"image and olm.csv.metadata). Problems go to stderr; excluded bundles are left out.",
		Example: "  almctl catalog render bundles -o yaml\n" +
			"  almctl catalog render registry.example/catalogs/konnect:latest",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "yaml" {
				return &exitError{code: 1, msg: fmt.Sprintf("--output %q: use json or yaml", output)}
			}
			ix, err := img.openCatalog(cmd.Context(), args[0], true)
			if err != nil {
				return err
			}
			printProblems(cmd.ErrOrStderr(), ix.Problems())
			out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
			if err := ix.WriteCatalog("", output, out); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			return out.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: json or yaml")
	img.register(cmd.Flags())
	return cmd
}

func newResolveCommand() *cobra.Command {
	var req index.Request
	var img imageFlags
	cmd := &cobra.Command{
		Use:   "resolve DIR|REF --package P [--channel C] [--from VERSION] [--range R]",
		Short: "Show which bundle ALM would install or upgrade to, and why each other was not chosen",
		Long: "Resolve a package in the catalog directory DIR (or the catalog image REF, see `catalog render`): without\n" +
			"--from, the highest version in the channel (and range); with --from, the best successor of the installed\n" +
			"version reachable by replaces, skips and skipRange. Exit code 0 when a bundle was chosen or the installed\n" +
			"version is already the newest, 1 otherwise.",
		Example: "  almctl catalog resolve bundles --package konnect-operator --from 1.0.0\n" +
			"  almctl catalog resolve registry.example/catalogs/konnect:latest --package konnect-operator",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ix, err := img.openCatalog(cmd.Context(), args[0], false)
			if err != nil {
				return err
			}
			res, err := ix.Resolve(req)
			if err != nil {
				printPackageProblems(cmd.ErrOrStderr(), args[0], req.Package, ix.Problems())
				return &exitError{code: 1, msg: err.Error()}
			}
			explained := res.Explain()
			if !strings.HasSuffix(explained, "\n") {
				explained += "\n"
			}
			fmt.Fprint(cmd.OutOrStdout(), explained)
			printPackageProblems(cmd.ErrOrStderr(), args[0], req.Package, ix.Problems())
			if res.Chosen == nil && req.From == "" {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&req.Package, "package", "", "package to resolve (required)")
	cmd.Flags().StringVar(&req.Channel, "channel", "", "channel (default: the package's default channel)")
	cmd.Flags().StringVar(&req.From, "from", "", "installed version to upgrade from")
	cmd.Flags().StringVar(&req.Range, "range", "", "semver range the version must be in, e.g. '>=1.0.0 <2.0.0'")
	_ = cmd.MarkFlagRequired("package")
	img.register(cmd.Flags())
	return cmd
}

func newGraphCommand() *cobra.Command {
	var pkg string
	var img imageFlags
	cmd := &cobra.Command{
		Use:   "graph DIR|REF --package P",
		Short: "Print a package's upgrade graph as a Mermaid flowchart",
		Long: "Print the upgrade graph of a package in the catalog directory DIR (or the catalog image REF, see `catalog\n" +
			"render`) as a Mermaid flowchart, one subgraph per channel: replaces edges are solid arrows, skips dotted\n" +
			"arrows, skipRange thick arrows labelled with the range.",
		Example: "  almctl catalog graph bundles/konnect-operator --package konnect-operator",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ix, err := img.openCatalog(cmd.Context(), args[0], false)
			if err != nil {
				return err
			}
			printPackageProblems(cmd.ErrOrStderr(), args[0], pkg, ix.Problems())
			if err := ix.WriteMermaid(cmd.OutOrStdout(), pkg); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&pkg, "package", "", "package to graph (required)")
	_ = cmd.MarkFlagRequired("package")
	img.register(cmd.Flags())
	return cmd
}
