package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// clusterState is what `almctl status` reads from a cluster: AppTypes, OperatorVersions, CatalogSources and (for
// one AppType) Events. It is rendered by the pure functions of statusview.go.
type clusterState struct {
	appTypes []almv1alpha1.AppType
	versions []almv1alpha1.OperatorVersion
	catalogs map[string]*almv1alpha1.CatalogSource // by namespace/name
	events   []corev1.Event
	now      time.Time
}

func newStatusCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "status [APPTYPE] [-n NAMESPACE | -A]",
		Short: "Show what is installed in a cluster, what is offered, and why",
		Long: "Without APPTYPE: one line per AppType of the namespace (default: the kubeconfig context's; -A: every\n" +
			"namespace), joined across AppType, OperatorVersion and CatalogSource: the installed version and its phase, the\n" +
			"catalog it came from, the upgrade offered, and why it is as it is.\n" +
			"With APPTYPE: why each candidate bundle was or was not chosen, the conditions of the AppType, its\n" +
			"OperatorVersions and catalog, the objects the installed version owns, and recent events.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all && (len(args) > 0 || explicitNamespace() != "") {
				return &exitError{code: 2, msg: "-A lists every namespace; it does not go with -n or an APPTYPE"}
			}
			cfg, ns, err := restConfig()
			if err != nil {
				return failed(err)
			}
			c, err := kubeClient(cfg)
			if err != nil {
				return failed(err)
			}
			if all {
				ns = ""
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			st, err := readState(ctx, c, ns, name)
			if err != nil {
				return failed(err)
			}
			if name == "" {
				writeSummary(cmd.OutOrStdout(), st, all)
				return nil
			}
			return writeDetail(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	return cmd
}

// readState reads the AppTypes of namespace ("" for all; only the AppType name when name is set), the
// OperatorVersions there, the CatalogSources they came from, and for one AppType the events of it and its versions.
func readState(ctx context.Context, c client.Client, namespace, name string) (*clusterState, error) {
	st := &clusterState{catalogs: map[string]*almv1alpha1.CatalogSource{}, now: time.Now()}
	if name != "" {
		at := &almv1alpha1.AppType{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, at); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("no AppType %s in namespace %s (almctl status -n %s lists them)", name, namespace, namespace)
			}
			return nil, err
		}
		st.appTypes = []almv1alpha1.AppType{*at}
	} else {
		list := &almv1alpha1.AppTypeList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		st.appTypes = list.Items
	}
	ovs := &almv1alpha1.OperatorVersionList{}
	if err := c.List(ctx, ovs, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	st.versions = ovs.Items
	if err := st.readCatalogs(ctx, c); err != nil {
		return nil, err
	}
	if name == "" {
		return st, nil
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	st.events = events.Items
	return st, nil
}

// readCatalogs reads the CatalogSources the versions name (one Get each; a user may read them without list
// permission on every namespace). One that cannot be read is left out.
func (st *clusterState) readCatalogs(ctx context.Context, c client.Client) error {
	for _, ov := range st.versions {
		src := ov.Spec.Source
		if src == nil || st.catalogs[src.Namespace+"/"+src.Name] != nil {
			continue
		}
		cs := &almv1alpha1.CatalogSource{}
		err := c.Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name}, cs)
		switch {
		case err == nil:
			st.catalogs[src.Namespace+"/"+src.Name] = cs
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		default:
			return err
		}
	}
	return nil
}
