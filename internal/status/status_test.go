package status

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
	"github.com/almproject/alm/test/localkube"
)

var cp *localkube.Cluster

func TestMain(m *testing.M) {
	os.Exit(localkube.RunTests(m, localkube.Options{NoControllerManager: true,
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}}, &cp))
}

// recording is a client of cp that keeps the body of every status patch it sends (nil for none).
func recording(t *testing.T) (client.Client, *[]string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := operatorsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	sent := &[]string{}
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			*sent = append(*sent, string(data))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}), sent
}

// appType creates an AppType in a new namespace of its own, with a status, and returns it as the API server has it.
func appType(t *testing.T, c client.Client) *operatorsv1alpha1.AppType {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"generateName": strings.ToLower(t.Name()) + "-"}}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	at := &operatorsv1alpha1.AppType{ObjectMeta: metav1.ObjectMeta{Namespace: ns.GetName(), Name: "app"},
		Spec: operatorsv1alpha1.AppTypeSpec{Package: "etcd"}}
	if err := c.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	at.Status.InstalledOperatorVersion = "etcd.v1.0.0"
	at.Status.InstalledVersion = "1.0.0"
	apimeta.SetStatusCondition(&at.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Installing", Message: "installing"})
	apimeta.SetStatusCondition(&at.Status.Conditions, metav1.Condition{Type: "Blocked", Status: metav1.ConditionTrue, Reason: "Waiting", Message: "waiting"})
	if err := c.Status().Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestPatchSendsOnlyTheStatus: a status write is a merge patch of the status alone, over the version the loop read,
// that removes what the new status no longer has.
func TestPatchSendsOnlyTheStatus(t *testing.T) {
	c, sent := recording(t)
	orig := appType(t, c)
	at := orig.DeepCopy()
	at.Spec.Package = "changed-in-spec"
	at.Labels = map[string]string{"changed": "in-metadata"}
	at.Status.InstalledVersion = "2.0.0"
	apimeta.RemoveStatusCondition(&at.Status.Conditions, "Blocked")
	if err := Patch(t.Context(), c, orig, at); err != nil {
		t.Fatal(err)
	}
	if len(*sent) != 1 {
		t.Fatalf("sent %d status patches, want 1", len(*sent))
	}
	body := (*sent)[0]
	for _, unwanted := range []string{"spec", "changed-in-spec", "labels", "installedOperatorVersion", "apiVersion"} {
		if strings.Contains(body, unwanted) {
			t.Errorf("the status patch carries %q, want only what changed in the status: %s", unwanted, body)
		}
	}
	for _, wanted := range []string{`"resourceVersion":"` + orig.ResourceVersion + `"`, `"installedVersion":"2.0.0"`} {
		if !strings.Contains(body, wanted) {
			t.Errorf("the status patch lacks %s: %s", wanted, body)
		}
	}
	got := &operatorsv1alpha1.AppType{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(orig), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.InstalledVersion != "2.0.0" || got.Status.InstalledOperatorVersion != "etcd.v1.0.0" ||
		apimeta.FindStatusCondition(got.Status.Conditions, "Blocked") != nil || apimeta.FindStatusCondition(got.Status.Conditions, "Ready") == nil {
		t.Errorf("the API server has status %+v, want installedVersion 2.0.0, installedOperatorVersion kept, Ready kept and Blocked removed", got.Status)
	}
	if got.Spec.Package != "etcd" {
		t.Errorf("spec.package is %q after a status write, want etcd", got.Spec.Package)
	}
	if at.ResourceVersion != got.ResourceVersion {
		t.Errorf("the written object has resourceVersion %s, the API server %s: Patch must leave obj as written", at.ResourceVersion, got.ResourceVersion)
	}

	// The same status again, with another spec: nothing to send.
	again := got.DeepCopy()
	again.Spec.Package = "other"
	if err := Patch(t.Context(), c, got, again); err != nil || len(*sent) != 1 {
		t.Errorf("an unchanged status sent %d patches in all (err %v), want none more", len(*sent), err)
	}

	// A status computed from the version before: refused as a conflict, which Patch drops.
	stale := orig.DeepCopy()
	stale.Status.InstalledVersion = "3.0.0"
	if err := Patch(t.Context(), c, orig, stale); err != nil {
		t.Errorf("a stale write: %v, want the conflict dropped", err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(orig), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.InstalledVersion != "2.0.0" {
		t.Errorf("a status computed from a stale copy overwrote a newer one: installedVersion %s, want 2.0.0", got.Status.InstalledVersion)
	}
}

// TestPatchUnstructured: an object whose status is not a field of its Go type is written from the whole object, as
// before.
func TestPatchUnstructured(t *testing.T) {
	c, sent := recording(t)
	at := appType(t, c)
	orig := &unstructured.Unstructured{}
	orig.SetGroupVersionKind(operatorsv1alpha1.GroupVersion.WithKind("AppType"))
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), orig); err != nil {
		t.Fatal(err)
	}
	obj := orig.DeepCopy()
	if err := unstructured.SetNestedField(obj.Object, "2.0.0", "status", "installedVersion"); err != nil {
		t.Fatal(err)
	}
	if err := Patch(t.Context(), c, orig, obj); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(at), at); err != nil {
		t.Fatal(err)
	}
	if len(*sent) != 1 || at.Status.InstalledVersion != "2.0.0" {
		t.Errorf("sent %d patches, installedVersion %q; want 1 and 2.0.0", len(*sent), at.Status.InstalledVersion)
	}
}
