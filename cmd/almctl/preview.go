package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/bundlediff"
)

func newBundleDiffCommand() *cobra.Command {
	var img imageFlags
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Preview what upgrading from bundle OLD to NEW (directories or bundle images) would change",
		Long: "Compare two registry+v1 bundle directories as an upgrade from OLD to NEW, offline: objects added, changed\n" +
			"and removed (for a Deployment, its containers' images, args and env), RBAC rules granted and revoked with\n" +
			"the ones ALM's policy refuses by default, CRD changes with the upgrade-safety verdict, and webhooks. It is\n" +
			"the preview an AppType's status.upgradePreview shows. Exit code 0 when nothing would be refused, 3 when\n" +
			"something would (a change that needs an opt-in annotation, or an unsafe CRD update), 1 on errors.\n" +
			"OLD and NEW may be bundle images (a reference with its registry host that is not an existing path): they\n" +
			"are pulled by digest with docker's credentials, as `bundle push` pushes them.",
		Example: "  almctl bundle diff bundles/konnect-operator/1.0.0 bundles/konnect-operator/1.1.0\n" +
			"  almctl bundle diff registry.example/bundles/konnect-operator:1.0.0 registry.example/bundles/konnect-operator:1.1.0",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			older, oldName, oldVersion, err := img.loadManifests(cmd, args[0])
			if err != nil {
				return err
			}
			newer, _, newVersion, err := img.loadManifests(cmd, args[1])
			if err != nil {
				return err
			}
			res := bundlediff.Diff(older, newer)
			bundlediff.Write(cmd.OutOrStdout(), oldName, res.Preview(oldVersion, newVersion))
			if res.Refused() > 0 {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	img.register(cmd.Flags())
	return cmd
}

// loadManifests loads a bundle's manifests from a directory, or from a bundle image pulled by digest into a
// temporary directory; it prints the bundle's problems when it has errors.
func (f *imageFlags) loadManifests(cmd *cobra.Command, arg string) (*bundle.Manifests, string, string, error) {
	dir := arg
	if _, err := os.Stat(arg); err != nil && isImageRef(arg) {
		if dir, err = f.pullBundle(cmd.Context(), arg); err != nil {
			return nil, "", "", err
		}
		defer os.RemoveAll(filepath.Dir(dir))
	}
	b, problems := bundle.LoadInMemory(dir, arg)
	if b == nil || bundle.HasErrors(problems) {
		printProblems(cmd.ErrOrStderr(), problems)
		return nil, "", "", &exitError{code: 1, msg: arg + ": not a valid bundle"}
	}
	m, err := b.Manifests()
	if err != nil {
		return nil, "", "", &exitError{code: 1, msg: err.Error()}
	}
	return m, b.Package, b.Version.String(), nil
}

// pullBundle pulls a bundle image by digest into a new temporary directory and returns the bundle directory in it.
func (f *imageFlags) pullBundle(ctx context.Context, ref string) (string, error) {
	c, err := f.client()
	if err != nil {
		return "", err
	}
	digest, err := c.Digest(ctx, ref)
	if err != nil {
		return "", imageError(ref, err)
	}
	tmp, err := os.MkdirTemp("", "almctl-bundle-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "bundle")
	if _, err := c.PullBundle(ctx, ref, digest, dir); err != nil {
		_ = os.RemoveAll(tmp)
		return "", imageError(ref, err)
	}
	return dir, nil
}

func newUpgradeCommand() *cobra.Command {
	upgrade := &cobra.Command{Use: "upgrade", Short: "Look at the upgrade a cluster offers an AppType"}
	preview := &cobra.Command{
		Use:   "preview APPTYPE [-n NAMESPACE]",
		Short: "Show what the upgrade offered to an AppType would change",
		Long: "Print the AppType's status.upgradePreview: what upgrading from the installed version to the offered one\n" +
			"(status.availableUpgrade) would change. With approval: Manual, setting spec.approvedVersion to that version\n" +
			"approves exactly this preview.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, ns, err := restConfig()
			if err != nil {
				return failed(err)
			}
			c, err := kubeClient(cfg)
			if err != nil {
				return failed(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			at := &almv1alpha1.AppType{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: args[0]}, at); err != nil {
				return failed(err)
			}
			return writeUpgradePreview(cmd, at)
		},
	}
	upgrade.AddCommand(preview)
	return upgrade
}

// writeUpgradePreview prints an AppType's preview and how to approve it.
func writeUpgradePreview(cmd *cobra.Command, at *almv1alpha1.AppType) error {
	w := cmd.OutOrStdout()
	p := at.Status.UpgradePreview
	if at.Status.AvailableUpgrade == "" || p == nil {
		fmt.Fprintf(w, "AppType %s/%s: no upgrade offered (installed %s)\n", at.Namespace, at.Name, dash(at.Status.InstalledVersion))
		return nil
	}
	bundlediff.Write(w, at.Spec.Package, p)
	if at.Spec.Approval == almv1alpha1.ApprovalManual && at.Spec.ApprovedVersion != p.To {
		fmt.Fprintf(w, "\napprove it: kubectl -n %s patch apptype %s --type merge -p '{\"spec\":{\"approvedVersion\":\"%s\"}}'\n", at.Namespace, at.Name, p.To)
	}
	return nil
}
