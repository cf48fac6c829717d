package workloads

import (
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	hackimages "github.com/almproject/alm/hack/images"
	"github.com/almproject/alm/test/localenv"
	"github.com/almproject/alm/test/testapp"
)

// pushed holds the images pushed to the environment's registry so far ("<name>:<tag>"): the tests share one
// registry, and an image is built and pushed once.
var (
	pushedMu sync.Mutex
	pushed   = map[string]bool{}
	testApp  v1.Image
)

// pushWebhookOperator builds testdata/webhook-operator as alm.local/webhook-operator:<version> for each version, as
// `make images` builds operators, and pushes it to the environment's registry, where containerd pulls alm.local
// from.
func pushWebhookOperator(t *testing.T, versions ...string) {
	t.Helper()
	pushedMu.Lock()
	defer pushedMu.Unlock()
	dir := t.TempDir()
	built := false
	for _, v := range versions {
		if pushed["webhook-operator:"+v] {
			continue
		}
		target := hackimages.Target{Name: "webhook-operator", Package: "./test/workloads/testdata/webhook-operator", Version: v,
			Tag: localenv.ImageHost + "/webhook-operator:" + v}
		if _, err := hackimages.Build(t.Context(), target, hackimages.Options{Root: root, OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		built = true
	}
	if !built {
		return
	}
	refs, err := env.Registry.PushArchives(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		pushed["webhook-operator:"+v] = true
	}
	t.Logf("pushed %v", refs)
}

// pushTestApp pushes the tests' operator program (test/testapp) as alm.local/<pkg>:<version> for each version.
func pushTestApp(t *testing.T, pkg string, versions ...string) {
	t.Helper()
	pushedMu.Lock()
	defer pushedMu.Unlock()
	if testApp == nil {
		img, err := testapp.Build(root)
		if err != nil {
			t.Fatal(err)
		}
		testApp = img
	}
	for _, v := range versions {
		if pushed[pkg+":"+v] {
			continue
		}
		ref, err := name.ParseReference(env.Registry.Loopback+"/"+pkg+":"+v, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, testApp, remote.WithContext(t.Context())); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		pushed[pkg+":"+v] = true
	}
}
