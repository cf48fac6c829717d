package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/almproject/alm/catalog/migrate"
)

const migrateLong = `Convert a catalog kept in the older package-manifest layout into registry+v1 bundle directories that
almctl and ALM read (catalog directories, almctl publish).

DIR is a package directory, or a directory of package directories. A package directory holds
<package>.package.yaml and one directory per version with its ClusterServiceVersion, CRDs and other manifests:

  etcd/
    etcd.package.yaml          packageName: etcd
                               channels:
                               - name: stable
                                 currentCSV: etcdoperator.v0.9.4
                               defaultChannel: stable
    0.9.2/
      etcdoperator.v0.9.2.clusterserviceversion.yaml
      etcdclusters.etcd.database.coreos.com.crd.yaml
    0.9.4/
      etcdoperator.v0.9.4.clusterserviceversion.yaml    (spec.replaces: etcdoperator.v0.9.2)
      etcdclusters.etcd.database.coreos.com.crd.yaml

becomes, for each version, OUT/<package>/<spec.version>/:

  OUT/etcd/0.9.4/manifests/...                the version directory's manifests (multi-document files split)
  OUT/etcd/0.9.4/metadata/annotations.yaml    package etcd, channels stable, default channel stable

Rules:
  - A CSV is in a channel when the channel's currentCSV reaches it by following spec.replaces and spec.skips,
    transitively; edges to CSVs that are not in the package are ignored. A CSV in no channel is not written
    (warning not-in-channel).
  - A package manifest with one channel and no defaultChannel has that channel as default; with several channels
    defaultChannel is required.
  - Refused, with the file and the reason, before anything is written: a package directory without a package
    manifest, a currentCSV that names no CSV, two CSVs with the same name or version, a version directory without a
    ClusterServiceVersion or with two, a spec.version that is not semver, and an existing OUT/<package> (use
    --force to replace it). OUT must not be inside DIR, nor DIR inside OUT.

Prints each bundle directory written with its channels; check the result with almctl bundle validate OUT.`

func newMigrateCommand() *cobra.Command {
	var opts migrate.Options
	cmd := &cobra.Command{
		Use:   "migrate DIR OUT",
		Short: "Convert a package-manifest catalog (<package>.package.yaml + one directory per version) into bundle directories",
		Long:  migrateLong,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := migrate.PackageManifests(args[0], args[1], opts)
			var me *migrate.Error
			if errors.As(err, &me) {
				printProblems(cmd.ErrOrStderr(), me.Problems)
				return &exitError{code: 1, msg: fmt.Sprintf("migrate: nothing written to %s: %d error(s)", args[1], len(me.Problems))}
			}
			if res != nil {
				printProblems(cmd.ErrOrStderr(), res.Problems)
				for _, b := range res.Bundles {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s %s (%s) channels %s, default %s, %d files\n", b.Dir, b.Package,
						b.Version, b.Name, strings.Join(b.Channels, ","), b.DefaultChannel, len(b.Files))
				}
			}
			if err != nil {
				return &exitError{code: 1, msg: "migrate: " + err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d bundle directories to %s\n", len(res.Bundles), args[1])
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace OUT/<package> directories that already exist")
	return cmd
}
