// Package loops lists ALM's reconciliation loops and sets up any subset of them on a manager: cmd/alm runs them,
// and the integration tests run the same set.
package loops

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/almproject/alm/catalog/image"
	"github.com/almproject/alm/controllers/apptype"
	"github.com/almproject/alm/controllers/catalogsource"
	"github.com/almproject/alm/controllers/crd"
	"github.com/almproject/alm/controllers/crdaccess"
	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/internal/access"
	"github.com/almproject/alm/controllers/internal/bundlecontent"
	"github.com/almproject/alm/controllers/internal/cleanup"
	"github.com/almproject/alm/controllers/internal/imagepull"
	"github.com/almproject/alm/controllers/registry"
	"github.com/almproject/alm/controllers/requirements"
	"github.com/almproject/alm/controllers/rollback"
	"github.com/almproject/alm/controllers/upgrade"
	"github.com/almproject/alm/controllers/upgradetrigger"
	"github.com/almproject/alm/controllers/waves"
	"github.com/almproject/alm/internal/eventrec"
)

// Loop groups: the catalog loops decide what should be installed; the lifecycle loops install, upgrade and collect.
const (
	GroupCatalog   = "catalog"
	GroupLifecycle = "lifecycle"
)

// DefaultMaxConcurrentReconciles is how many objects each loop reconciles at once unless --max-concurrent-reconciles
// says otherwise. Installing is mostly waiting for the API server, so a few workers per loop keep a burst of installs
// moving without flooding the API server; a loop never works on the same object twice at once.
const DefaultMaxConcurrentReconciles = 4

// Options configure the loops.
type Options struct {
	// Registry holds the loaded catalogs; the catalog loops of one process share it.
	Registry *registry.Registry
	// Namespace is ALM's own namespace, whose CatalogSources serve every namespace.
	Namespace string
	// InstallTimeout bounds Pending and Installing.
	InstallTimeout time.Duration
	// CatalogResync is how often directory CatalogSources are read again.
	CatalogResync time.Duration
	// DirectoryCatalogRoot is the directory under which CatalogSources of every namespace may serve a directory (the
	// manager's --directory-catalog-root); empty: only CatalogSources in Namespace may. No CatalogSource may serve the
	// bundle cache (Bundles.Cache.Dir).
	DirectoryCatalogRoot string
	// Bundles verifies bundle content against the digest it was resolved to and pulls bundle images through one
	// on-disk cache, with the pull options of each image CatalogSource; the install, upgrade and requirements loops
	// share it. nil: content in spec is verified, bundle images cannot be pulled.
	Bundles *bundlecontent.Source
	// TrustAllNamespaces: a version that names no ServiceAccount is installed with ALM's own permissions in every
	// namespace (the manager's --trust-all-namespaces, for a cluster whose only tenants are its admins). false (the
	// default): only in Namespace and in namespaces labelled operators.alm.dev/trusted-installs=true; the same
	// namespaces may use image registries on loopback.
	TrustAllNamespaces bool
	// VersionFinalizers are the finalizers the apptype and upgradetrigger loops put on the OperatorVersions they
	// create, so that the install and upgrade loops need no request to add them: VersionFinalizers(selected).
	VersionFinalizers []string
	// Now is the clock of the install and upgrade loops (when webhook certificates are issued and renewed); nil:
	// time.Now. Tests move it to see certificates renewed.
	Now func() time.Time
	// Events writes the loops' Events (NewEvents); nil: the manager's recorders (client-go's broadcaster, which
	// holds a copy of every Event for six minutes or more).
	Events *eventrec.Broadcaster
}

// NewEvents returns what writes the loops' Events for Options.Events, added to mgr to run with it.
func NewEvents(mgr ctrl.Manager) (*eventrec.Broadcaster, error) {
	b, err := eventrec.New(mgr.GetConfig(), mgr.GetHTTPClient(), eventrec.Options{Scheme: mgr.GetScheme(), Logger: mgr.GetLogger().WithName("events")})
	if err != nil {
		return nil, err
	}
	return b, mgr.Add(b)
}

// recorder is the EventRecorder of the loop name.
func (o Options) recorder(mgr ctrl.Manager, name string) events.EventRecorder {
	if o.Events != nil {
		return o.Events.Recorder(name)
	}
	return mgr.GetEventRecorder(name)
}

// VersionFinalizers is what Options.VersionFinalizers holds for the selected loops: the cleanup finalizer when a
// loop that removes it (install, upgrade: its owners) is selected too, nothing otherwise (a manager of the catalog
// loops alone must not create what no loop of its own can let go; the install loop then adds the finalizer itself).
func VersionFinalizers(selected []Loop) []string {
	for _, l := range selected {
		if slices.Contains(l.RemovesFinalizers, cleanup.Finalizer) {
			return []string{cleanup.Finalizer}
		}
	}
	return nil
}

// accessPolicy is where the install and upgrade loops install versions without a ServiceAccount.
func (o Options) accessPolicy() access.Policy {
	return access.Policy{TrustAllNamespaces: o.TrustAllNamespaces, Namespace: o.Namespace}
}

// directoryPolicy is which directories the CatalogSources of each namespace may serve: any in ALM's namespace, those
// under DirectoryCatalogRoot elsewhere, and never the bundle cache or the catalog scratch directory.
func (o Options) directoryPolicy() catalogsource.DirectoryPolicy {
	p := catalogsource.DirectoryPolicy{Namespace: o.Namespace, Root: o.DirectoryCatalogRoot}
	if o.Bundles != nil && o.Bundles.Cache != nil && o.Bundles.Cache.Dir != "" {
		p.Forbidden = append(p.Forbidden, catalogsource.ForbiddenDir{Dir: o.Bundles.Cache.Dir,
			What: "ALM's bundle cache", Flag: "--bundle-cache-dir"})
	}
	if o.Bundles != nil && o.Bundles.Clients != nil && o.Bundles.Clients.ScratchDir != "" {
		p.Forbidden = append(p.Forbidden, catalogsource.ForbiddenDir{Dir: o.Bundles.Clients.ScratchDir,
			What: "ALM's catalog scratch directory", Flag: "--catalog-scratch-dir"})
	}
	return p
}

// bundles is o.Bundles with its image clients told which namespaces are trusted (the same as for installs: a
// cluster admin's namespaces may use registries on loopback), read with mgr's API reader. Every loop that pulls
// calls it, so that any selection of loops in a process sets it.
func (o Options) bundles(mgr ctrl.Manager) *bundlecontent.Source {
	if o.Bundles != nil && o.Bundles.Clients != nil && o.Bundles.Clients.Trusted == nil {
		o.Bundles.Clients.Trusted = o.trusted(mgr)
	}
	return o.Bundles
}

// trusted says whether a namespace's CatalogSources may use registries on loopback (access.Policy.Trusted), read
// with mgr's cache.
func (o Options) trusted(mgr ctrl.Manager) func(ctx context.Context, namespace string) (bool, error) {
	policy, reader := o.accessPolicy(), mgr.GetClient() // Namespaces come from the manager's cache
	return func(ctx context.Context, namespace string) (bool, error) {
		return policy.Trusted(ctx, reader, namespace)
	}
}

// NewBundles returns what the install, upgrade and requirements loops verify bundle content and pull bundle images
// with: cache, and one image client per image CatalogSource (imagepull.Clients), for Options.Bundles.
// almNamespace is ALM's namespace, whose CatalogSources' pull options every namespace may use.
func NewBundles(cache *image.BundleCache, almNamespace string) *bundlecontent.Source {
	return &bundlecontent.Source{Cache: cache, Clients: &imagepull.Clients{}, Namespace: almNamespace}
}

// Loop is one of ALM's reconciliation loops.
type Loop struct {
	Name  string
	Group string
	Setup func(ctrl.Manager, Options) error
	// AddsFinalizers are the finalizers the loop puts on objects; RemovesFinalizers are those it takes off. A
	// selection of loops that adds a finalizer none of its loops removes would leave deleted objects stuck, so
	// Select refuses it.
	AddsFinalizers, RemovesFinalizers []string
}

// All lists every loop, in start order.
var All = []Loop{
	{Name: "catalogsource", Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		r := &catalogsource.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Registry: o.Registry, Resync: o.CatalogResync,
			Directories: o.directoryPolicy()}
		if b := o.bundles(mgr); b != nil && b.Clients != nil {
			r.Images = b.Clients // one registry login per CatalogSource, for its catalog and its bundles
		} else {
			// Without bundle clients of its own the loop still holds tenants off loopback registries.
			r.Images = &imagepull.Clients{Trusted: o.trusted(mgr)}
		}
		return r.SetupWithManager(mgr)
	}},
	{Name: "apptype", Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&apptype.Reconciler{Client: mgr.GetClient(), Registry: o.Registry, Recorder: o.recorder(mgr, "apptype"), Namespace: o.Namespace,
			VersionFinalizers: o.VersionFinalizers, Bundles: o.bundles(mgr), Reader: mgr.GetAPIReader()}).SetupWithManager(mgr)
	}},
	{Name: "requirements", Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&requirements.Reconciler{Client: mgr.GetClient(), Registry: o.Registry, Recorder: o.recorder(mgr, "requirements"),
			Bundles: o.bundles(mgr), Reader: mgr.GetAPIReader(), Namespace: o.Namespace,
			Access: &access.Checker{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespaces: mgr.GetClient(), Policy: o.accessPolicy()}}).SetupWithManager(mgr)
	}},
	{Name: "crd", Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&crd.Reconciler{Client: mgr.GetClient(), Registry: o.Registry, Recorder: o.recorder(mgr, "crd")}).SetupWithManager(mgr)
	}},
	{Name: upgradetrigger.Name, Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&upgradetrigger.Reconciler{Client: mgr.GetClient(), Registry: o.Registry, Recorder: o.recorder(mgr, upgradetrigger.Name), Namespace: o.Namespace,
			VersionFinalizers: o.VersionFinalizers}).SetupWithManager(mgr)
	}},
	{Name: waves.Name, Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&waves.Reconciler{Client: mgr.GetClient(), Registry: o.Registry, Recorder: o.recorder(mgr, waves.Name), Namespace: o.Namespace,
			VersionFinalizers: o.VersionFinalizers}).SetupWithManager(mgr)
	}},
	{Name: rollback.Name, Group: GroupCatalog, Setup: func(mgr ctrl.Manager, o Options) error {
		return (&rollback.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Registry: o.Registry, Recorder: o.recorder(mgr, rollback.Name),
			Namespace: o.Namespace, VersionFinalizers: o.VersionFinalizers}).SetupWithManager(mgr)
	}},
	// crdaccess grants ALM list on the custom resources of the CRDs the versions ship, which install and upgrade
	// read to check a CRD update (ALM's least-privilege role has no `*`).
	{Name: "crdaccess", Group: GroupLifecycle, Setup: func(mgr ctrl.Manager, _ Options) error {
		return (&crdaccess.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	}},
	{Name: "install", Group: GroupLifecycle, Setup: func(mgr ctrl.Manager, o Options) error {
		r := install.New(mgr, o.InstallTimeout, o.bundles(mgr))
		r.Installer.Recorder = o.recorder(mgr, "install")
		r.Installer.Access.Policy, r.Installer.Access.Namespaces = o.accessPolicy(), mgr.GetClient()
		r.Installer.Now = o.Now
		return r.SetupWithManager(mgr)
	}, AddsFinalizers: []string{cleanup.Finalizer}, RemovesFinalizers: []string{cleanup.Finalizer}},
	{Name: "upgrade", Group: GroupLifecycle, Setup: func(mgr ctrl.Manager, o Options) error {
		r := upgrade.New(mgr, o.InstallTimeout, o.bundles(mgr))
		r.Recorder = o.recorder(mgr, "upgrade")
		r.Installer.Recorder = r.Recorder
		r.Installer.Access.Policy, r.Installer.Access.Namespaces = o.accessPolicy(), mgr.GetClient()
		r.Installer.Now = o.Now
		return r.SetupWithManager(mgr)
	}, AddsFinalizers: []string{cleanup.Finalizer}, RemovesFinalizers: []string{cleanup.Finalizer}},
	{Name: "gc", Group: GroupLifecycle, Setup: func(mgr ctrl.Manager, o Options) error {
		r := gc.New(mgr)
		r.Recorder = o.recorder(mgr, "gc")
		return r.SetupWithManager(mgr)
	}},
}

// Usage explains the --loops flag.
func Usage() string {
	return fmt.Sprintf("Comma-separated loops to run: \"all\", a group (%q or %q) or loop names (%s). "+
		"Run the catalog loops and the lifecycle loops in two managers to scale them apart. "+
		"Each loop that adds a finalizer also removes it (install and upgrade: the cleanup finalizer), so any selection is safe.",
		GroupCatalog, GroupLifecycle, strings.Join(Names(All), ", "))
}

// Select turns a --loops value (all, a group, loop names; comma-separated) into the loops to run, in start order.
func Select(spec string) ([]Loop, error) {
	want := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		matched := false
		for _, l := range All {
			if item == "all" || item == l.Group || item == l.Name {
				want[l.Name] = true
				matched = true
			}
		}
		if !matched && item != "all" {
			known := append([]string{"all", GroupCatalog, GroupLifecycle}, Names(All)...)
			sort.Strings(known[3:])
			return nil, fmt.Errorf("--loops: unknown loop or group %q; known: %s", item, strings.Join(known, ", "))
		}
	}
	var out []Loop
	for _, l := range All {
		if want[l.Name] {
			out = append(out, l)
		}
	}
	return out, checkFinalizers(out)
}

// checkFinalizers refuses a selection in which a loop adds a finalizer that no selected loop removes.
func checkFinalizers(selected []Loop) error {
	removed := map[string]bool{}
	for _, l := range selected {
		for _, f := range l.RemovesFinalizers {
			removed[f] = true
		}
	}
	for _, l := range selected {
		for _, f := range l.AddsFinalizers {
			if removed[f] {
				continue
			}
			var removers []string
			for _, other := range All {
				if slices.Contains(other.RemovesFinalizers, f) {
					removers = append(removers, other.Name)
				}
			}
			return fmt.Errorf("--loops: the %s loop adds the finalizer %s, which only the %s loop removes: "+
				"without it deleted objects would never go away; add %s to --loops (or run the %q group)",
				l.Name, f, strings.Join(removers, ", "), strings.Join(removers, ","), l.Group)
		}
	}
	return nil
}

// Names returns the loops' names.
func Names(loops []Loop) []string {
	out := make([]string, 0, len(loops))
	for _, l := range loops {
		out = append(out, l.Name)
	}
	return out
}
