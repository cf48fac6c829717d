package slim

import (
	"reflect"
	"sync"

	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorsv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// maxContents bounds how many bundle contents the table keeps: more than a cluster's catalogs publish at once, few
// enough that the contents of versions long gone (kept until the table is cleared) cost little.
const maxContents = 256

// content is what an OperatorVersion's spec carries of its bundle, most of its bytes: the install strategy, the
// CRD descriptions, the webhook definitions and the other manifests.
type content struct {
	install  opv1alpha1.NamedInstallStrategy
	crds     opv1alpha1.CustomResourceDefinitions
	webhooks []opv1alpha1.WebhookDescription
	objects  []runtime.RawExtension
}

// contents keeps one copy of each bundle content that cached OperatorVersions hold, by package, version and digest.
var contents = struct {
	sync.Mutex
	m map[string]*content
}{m: map[string]*content{}}

// shareContent makes ov's bundle content the copy the table keeps, when it is equal to it: every install of a
// bundle in every namespace then holds the same install strategy and manifests, once, instead of one copy decoded
// per OperatorVersion (and per watch event). A content that differs from the table's (a version edited by hand, or
// one whose digest does not match) stays ov's own. Cached objects are never changed in place (readers get copies),
// so sharing what they hold is safe.
func shareContent(ov *operatorsv1alpha1.OperatorVersion) {
	key := ov.Spec.PackageName + "@" + ov.Spec.Version.String()
	if ov.Spec.Bundle != nil {
		key += "@" + ov.Spec.Bundle.Digest
	}
	own := content{install: ov.Spec.Install, crds: ov.Spec.CustomResourceDefinitions,
		webhooks: ov.Spec.WebhookDefinitions, objects: ov.Spec.Objects}
	contents.Lock()
	defer contents.Unlock()
	c, ok := contents.m[key]
	if !ok {
		if len(contents.m) >= maxContents {
			clear(contents.m)
		}
		contents.m[key] = &own
		return
	}
	if !reflect.DeepEqual(c, &own) {
		return
	}
	ov.Spec.Install, ov.Spec.CustomResourceDefinitions = c.install, c.crds
	ov.Spec.WebhookDefinitions, ov.Spec.Objects = c.webhooks, c.objects
}
