package localenv

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Tell runs the whole story: publish the Konnect operator 1.0.0, install it with an AppType, sync Konnect objects,
// undo an edit made in Konnect, publish 1.1.0 (replaces 1.0.0) and watch the upgrade hand everything over.
func (s *Story) Tell(ctx context.Context) error {
	bundles := s.Env.Path("bundles", Package)
	steps := []struct {
		title, kubectl string
		fn             func() (string, error)
	}{
		{"Publish the Konnect operator 1.0.0 into the ConfigMap catalog " + CatalogName,
			"get catalogsources -n " + ALMNamespace, func() (string, error) {
				if err := s.CreateCatalog(ctx); err != nil {
					return "", err
				}
				out, err := s.Publish(ctx, filepath.Join(bundles, "1.0.0"))
				return "almctl publish bundles/konnect-operator/1.0.0 --catalog " + CatalogName + " -n " + ALMNamespace + ": " + strings.TrimSpace(out), err
			}},
		{"Declare an AppType konnect-operator in " + OperatorNamespace,
			"get apptypes,operatorversions,deployments -n " + OperatorNamespace, func() (string, error) { return s.installOperator(ctx) }},
		{"Declare Konnect objects in namespace " + DemoNamespace + ": auth (token in a Secret), control plane, service, route, consumer",
			"get konnectapiauthconfigurations,konnectgatewaycontrolplanes,kongservices,kongroutes,kongconsumers -n " + DemoNamespace, func() (string, error) { return s.syncDemo(ctx) }},
		{"Edit the service in Konnect (as in the Konnect UI): the operator puts the declared state back",
			"get kongservices -n " + DemoNamespace + " -o wide", func() (string, error) { return s.undoEdit(ctx) }},
		{"Publish 1.1.0 (replaces konnect-operator.v1.0.0): ALM upgrades, hands the objects over and collects 1.0.0",
			"get operatorversions -n " + OperatorNamespace + "; kubectl get kongroutes -n " + DemoNamespace, func() (string, error) {
				return s.upgrade(ctx, filepath.Join(bundles, "1.1.0"), "1.1.0")
			}},
	}
	for _, st := range steps {
		if err := s.Step(st.title, st.kubectl, st.fn); err != nil {
			return err
		}
	}
	return nil
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
	return fmt.Sprintf("OperatorVersion %s %s; the operator runs as ServiceAccount %s/%s with its bundle's RBAC",
		ov.Name, ov.Status.Phase, OperatorNamespace, d.Spec.Template.Spec.ServiceAccountName), nil
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
	if _, err := s.Publish(ctx, bundle); err != nil {
		return "", err
	}
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
	summary := fmt.Sprintf("%s %s; Deployment %s adopted (same UID %s); Konnect ids unchanged", ov.Name, ov.Status.Phase,
		types.NamespacedName{Namespace: OperatorNamespace, Name: Package}, after.UID)
	if creates >= 0 {
		summary += fmt.Sprintf("; Konnect creates during the upgrade: %d", s.konnectCreates()-creates)
	}
	return summary, nil
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
