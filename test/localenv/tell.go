package localenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/types"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Tell runs the whole story: publish the Konnect operator 1.0.0 (its bundle image and the catalog image), install it
// with an AppType, sync Konnect objects, undo an edit made in Konnect, let a team install into its own namespace,
// publish 1.1.0 (replaces 1.0.0) by pushing the next catalog image to the same tag and watch the upgrade hand
// everything over, then publish every later version of bundles/ and end on the newest.
func (s *Story) Tell(ctx context.Context) error {
	bundles := s.Env.Path("bundles", Package)
	catalog := s.Catalog.CatalogRef()
	steps := []struct {
		title, kubectl string
		fn             func() (string, error)
	}{
		{"Publish the Konnect operator 1.0.0: push its bundle image and the catalog image " + catalog +
			"; the image CatalogSource " + CatalogName + " polls it every " + CatalogPollInterval.String() +
			" (and at once after each publish: kubectl annotate catsrc " + CatalogName + " " + RefreshAnnotation + "=<new value>)",
			"get catsrc -n " + ALMNamespace + " -o wide   (IMAGE and DIGEST columns)", func() (string, error) {
				return s.publishFirst(ctx, filepath.Join(bundles, "1.0.0"))
			}},
		{"Declare an AppType konnect-operator in " + OperatorNamespace + ", as a cluster admin: the namespace is labelled " +
			operatorsv1alpha1.LabelTrustedInstalls + "=true, so ALM installs there with its own permissions",
			"get apptypes,operatorversions,deployments -n " + OperatorNamespace, func() (string, error) { return s.installOperator(ctx) }},
		{"Declare Konnect objects in namespace " + DemoNamespace + ": auth (token in a Secret), control plane, service, route, consumer",
			"get konnectapiauthconfigurations,konnectgatewaycontrolplanes,kongservices,kongroutes,kongconsumers -n " + DemoNamespace, func() (string, error) { return s.syncDemo(ctx) }},
		{"Edit the service in Konnect (as in the Konnect UI): the operator puts the declared state back",
			"get kongservices -n " + DemoNamespace + " -o wide", func() (string, error) { return s.undoEdit(ctx) }},
		{"A team installs " + TenantPackage + " in its namespace " + TenantNamespace + ", which no cluster admin trusted: its AppType names " +
			"the ServiceAccount " + TenantServiceAccount + " (spec.serviceAccountName), and ALM installs only what that ServiceAccount may create and grant",
			"get apptypes,operatorversions,roles -n " + TenantNamespace, func() (string, error) { return s.InstallAsTenant(ctx) }},
		{"Publish 1.1.0 (replaces konnect-operator.v1.0.0): push its bundle image and the next catalog image to the same tag; " +
			"on the next poll ALM upgrades, hands the objects over and collects 1.0.0",
			"get catsrc -n " + ALMNamespace + " -o wide; kubectl get operatorversions -n " + OperatorNamespace + "; kubectl get kongroutes -n " + DemoNamespace,
			func() (string, error) { return s.upgrade(ctx, filepath.Join(bundles, "1.1.0"), "1.1.0") }},
		{"Publish the rest of bundles/" + Package + ", each version replacing the one before: ALM upgrades through every one " +
			"(the operators of the versions that opt in take over from their predecessor themselves), ending on the newest, " +
			"whose kinds Kong's samples use",
			"get operatorversions -n " + OperatorNamespace + "; kubectl api-resources --api-group=configuration.konghq.com",
			func() (string, error) { return s.upgradeToNewest(ctx, bundles) }},
	}
	for _, st := range steps {
		if err := s.Step(st.title, st.kubectl, st.fn); err != nil {
			return err
		}
	}
	return nil
}

// publishFirst publishes the first bundle, creates the image CatalogSource and waits until it serves the catalog.
func (s *Story) publishFirst(ctx context.Context, bundle string) (string, error) {
	pub, err := s.Publish(ctx, bundle)
	if err != nil {
		return "", err
	}
	if err := s.CreateCatalog(ctx); err != nil {
		return "", err
	}
	cs, err := s.WaitCatalogServes(ctx, CatalogName, pub.CatalogDigest)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pushed %s (%s) and %s (%s); CatalogSource %s serves %d package(s), %d bundle(s)",
		pub.BundleTag, ShortDigest(pub.BundleImage), s.Catalog.CatalogRef(), ShortDigest(pub.CatalogDigest), CatalogName,
		cs.Status.PackageCount, cs.Status.BundleCount), nil
}

// ShortDigest is the digest in ref (or ref itself, a digest) shortened for display: sha256: and 12 hex digits.
func ShortDigest(ref string) string {
	if i := strings.LastIndex(ref, "sha256:"); i >= 0 && len(ref) >= i+19 {
		return ref[i : i+19]
	}
	return ref
}

func (s *Story) installOperator(ctx context.Context) (string, error) {
	if err := s.DeclareAppType(ctx, OperatorNamespace, Package); err != nil {
		return "", err
	}
	ov, err := s.WaitInstalled(ctx, OperatorNamespace, Package, "1.0.0")
	if err != nil {
		return "", err
	}
	if err := s.Env.WaitDeploymentAvailable(ctx, OperatorNamespace, Package, s.Timeout); err != nil {
		return "", err
	}
	d, err := s.OperatorDeployment(ctx, OperatorNamespace)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("OperatorVersion %s %s (bundle %s); the node pulled %s from %s (its mirror for alm.local); the operator runs as ServiceAccount %s/%s with its bundle's RBAC",
		ov.Name, ov.Status.Phase, bundleText(ov), d.Spec.Template.Spec.Containers[0].Image, s.Env.Registry.Host,
		OperatorNamespace, d.Spec.Template.Spec.ServiceAccountName), nil
}

// bundleText says what an OperatorVersion was resolved from: its bundle image by digest, or its content digest.
func bundleText(ov *operatorsv1alpha1.OperatorVersion) string {
	switch {
	case ov.Spec.Bundle == nil:
		return "unknown"
	case ov.Spec.Bundle.Image != "":
		return ov.Spec.Bundle.Image
	}
	return "content " + ShortDigest(ov.Spec.Bundle.Digest) + ", from the catalog's olm.bundle.object"
}

func (s *Story) syncDemo(ctx context.Context) (string, error) {
	if err := s.ApplyDemo(ctx, DemoNamespace); err != nil {
		return "", err
	}
	ids, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	return "all Programmed; Konnect ids: " + ids.String(), nil
}

func (s *Story) undoEdit(ctx context.Context) (string, error) {
	ids, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	edited, err := s.EditServiceInKonnect(ctx, ids["KongService/"+DemoService])
	if !edited {
		return "skipped: an out-of-band edit needs the simulator", err
	}
	return fmt.Sprintf("the host was edited to edited-in-the-ui.example.com in Konnect; the operator set it back to %s", DemoServiceHost), err
}

func (s *Story) upgrade(ctx context.Context, bundle, version string) (string, error) {
	ids, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	before, err := s.OperatorDeployment(ctx, OperatorNamespace)
	if err != nil {
		return "", err
	}
	creates := s.konnectCreates()
	pub, err := s.Publish(ctx, bundle)
	if err != nil {
		return "", err
	}
	pushed := time.Now()
	if _, err := s.WaitCatalogServes(ctx, CatalogName, pub.CatalogDigest); err != nil {
		return "", err
	}
	polled := time.Since(pushed)
	ov, err := s.WaitInstalled(ctx, OperatorNamespace, Package, version)
	if err != nil {
		return "", err
	}
	after, err := s.OperatorDeployment(ctx, OperatorNamespace)
	if err != nil {
		return "", err
	}
	if after.UID != before.UID {
		return "", fmt.Errorf("the operator's Deployment was replaced (UID %s, was %s), not adopted", after.UID, before.UID)
	}
	now, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	if now.String() != ids.String() {
		return "", fmt.Errorf("the Konnect ids changed in the upgrade: %s, were %s", now, ids)
	}
	summary := fmt.Sprintf("pushed %s; the catalog %s was served %.1fs after the push; %s %s (bundle %s); "+
		"Deployment %s adopted (same UID %s); Konnect ids unchanged", pub.BundleTag, ShortDigest(pub.CatalogDigest),
		polled.Seconds(), ov.Name, ov.Status.Phase, bundleText(ov), types.NamespacedName{Namespace: OperatorNamespace, Name: Package}, after.UID)
	if creates >= 0 {
		summary += fmt.Sprintf("; Konnect creates during the upgrade: %d", s.konnectCreates()-creates)
	}
	return summary, nil
}

// upgradeToNewest publishes every version of bundles (a bundles/<package> directory) newer than the one installed,
// in order, and waits for each to be installed with the story's Konnect ids unchanged.
func (s *Story) upgradeToNewest(ctx context.Context, bundles string) (string, error) {
	ids, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	at := &operatorsv1alpha1.AppType{}
	if err := s.Env.Client.Get(ctx, types.NamespacedName{Namespace: OperatorNamespace, Name: Package}, at); err != nil {
		return "", err
	}
	versions, err := LaterVersions(bundles, at.Status.InstalledVersion)
	if err != nil {
		return "", err
	}
	creates := s.konnectCreates()
	var took []string
	for _, v := range versions {
		start := time.Now()
		if _, err := s.Publish(ctx, filepath.Join(bundles, v)); err != nil {
			return "", err
		}
		if _, err := s.WaitInstalled(ctx, OperatorNamespace, Package, v); err != nil {
			return "", err
		}
		took = append(took, fmt.Sprintf("%s in %.1fs", v, time.Since(start).Seconds()))
	}
	now, err := s.WaitProgrammed(ctx, DemoNamespace)
	if err != nil {
		return "", err
	}
	if now.String() != ids.String() {
		return "", fmt.Errorf("the Konnect ids changed in the upgrades: %s, were %s", now, ids)
	}
	summary := "installed " + strings.Join(took, ", ") + " (publish to installed, the old version collected); Konnect ids unchanged"
	if creates >= 0 {
		summary += fmt.Sprintf("; Konnect creates during the upgrades: %d", s.konnectCreates()-creates)
	}
	return summary, nil
}

// LaterVersions are the version directories of a bundles/<package> directory newer than version, oldest first.
func LaterVersions(dir, version string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	current, err := semver.Parse(version)
	if err != nil {
		return nil, fmt.Errorf("installed version %q: %w", version, err)
	}
	var later []semver.Version
	for _, e := range entries {
		if v, err := semver.Parse(e.Name()); err == nil && e.IsDir() && v.GT(current) {
			later = append(later, v)
		}
	}
	semver.Sort(later)
	out := make([]string, len(later))
	for i, v := range later {
		out[i] = v.String()
	}
	return out, nil
}

// konnectCreates counts the create calls the simulator served (-1 with real Konnect).
func (s *Story) konnectCreates() int64 {
	if s.Env.Sim == nil {
		return -1
	}
	var n int64
	for endpoint, count := range s.Env.Sim.Counters() {
		if strings.HasPrefix(endpoint, "POST ") {
			n += count
		}
	}
	return n
}
