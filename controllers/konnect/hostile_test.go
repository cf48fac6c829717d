package konnect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	konnectv1alpha2 "github.com/almproject/alm/apis/konnect/v1alpha2"
	"github.com/almproject/alm/controllers/konnect/authconfig"
	"github.com/almproject/alm/test/docscheck"
	"github.com/almproject/alm/test/konnectsim"
)

// hostileRow is one hostile input to the Konnect operator. Either the API server refuses the object (admission:
// the error names the object, the field and the rule), or the operator accepts it and reports it (condition: the
// auth configuration's APIAuthValid is False naming the field and the rule, and a control plane that uses it says
// why it waits). Either way nothing is sent to Konnect and the good objects beside it stay Programmed.
type hostileRow struct {
	name string
	// objects are created in order; the last one is the hostile object. Auth configurations point at trapURL, a
	// simulator of their own that must receive no request.
	objects func(trapURL string) []client.Object
	// admission: substrings of the API server's error creating the hostile object.
	admission []string
	// reason and message: the APIAuthValid condition of the hostile auth configuration (runtime rows).
	reason  string
	message []string
	// secret must not be quoted in what the user sees (a token).
	secret string
	// refused: the hostile object is accepted by the API server and the operator refuses it with condition
	// refused.typ False (reason and message as above) on it, calling Konnect for nothing.
	refused *refusal
}

// refusal is a condition the operator sets on a hostile object of kind obj.
type refusal struct {
	obj client.Object
	typ string
}

const mb = 1 << 20

func hostileRows() []hostileRow {
	rows := append(serverURLRows(), tokenRows()...)
	rows = append(rows, secretRows()...)
	rows = append(rows, namespaceRows()...)
	return append(rows, hugeRows()...)
}

func one(objs ...client.Object) func(string) []client.Object {
	return func(string) []client.Object { return objs }
}

func authWith(name string, change func(*konnectv1alpha1.KonnectAPIAuthConfiguration)) func(string) []client.Object {
	return func(trapURL string) []client.Object {
		a := authConfig(name, trapURL)
		change(a)
		return []client.Object{a}
	}
}

func serverURLRows() []hostileRow {
	row := func(name, url string, rule string) hostileRow {
		return hostileRow{
			name:      name,
			objects:   authWith(name, func(a *konnectv1alpha1.KonnectAPIAuthConfiguration) { a.Spec.ServerURL = url }),
			admission: []string{`KonnectAPIAuthConfiguration.konnect.konghq.com "` + name + `" is invalid`, "spec.serverURL", rule},
		}
	}
	const scheme, shape = "serverURL must use https or http", "serverURL must be [http[s]://]host[:port][/path]"
	return []hostileRow{
		row("serverurl-file", "file:///etc/passwd", scheme),
		row("serverurl-gopher", "gopher://evil.example.com:70/_x", scheme),
		row("serverurl-javascript", "javascript:alert(1)", shape),
		row("serverurl-scheme-relative", "//evil.example.com", shape),
		row("serverurl-no-scheme-crlf", "eu.api.konghq.com/\r\nHost: evil.example.com", shape),
		row("serverurl-userinfo", "https://user:secret@evil.example.com", "serverURL must not hold user info"),
		row("serverurl-query", "https://eu.api.konghq.com/?next=evil.example.com", "serverURL must not have a query or fragment"),
	}
}

func tokenRows() []hostileRow {
	row := func(name, token, rule string) hostileRow {
		return hostileRow{
			name:      name,
			objects:   authWith(name, func(a *konnectv1alpha1.KonnectAPIAuthConfiguration) { a.Spec.Token = token }),
			admission: []string{`KonnectAPIAuthConfiguration.konnect.konghq.com "` + name + `" is invalid`, "spec.token", rule},
			secret:    token,
		}
	}
	const printable = "a Konnect token is printable ASCII without spaces, line breaks or control characters"
	return []hostileRow{
		row("token-crlf-header-injection", "kpat_abc\r\nX-Evil: 1", printable),
		row("token-lf", "kpat_abc\nX-Evil: 1", printable),
		row("token-cr", "kpat_abc\rX-Evil: 1", printable),
		row("token-nul", "kpat_abc\x00def", printable),
		row("token-1mb", "kpat_"+strings.Repeat("a", mb), "Too long: may not be more than 1024 bytes"),
	}
}

// secretAuth is an auth configuration reading its token from the Secret name (in namespace ns when not empty).
func secretAuth(trapURL, name, secret, ns string) *konnectv1alpha1.KonnectAPIAuthConfiguration {
	return &konnectv1alpha1.KonnectAPIAuthConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: konnectv1alpha1.KonnectAPIAuthConfigurationSpec{
			Type: konnectv1alpha1.KonnectAPIAuthTypeSecretRef, SecretRef: &corev1.SecretReference{Name: secret, Namespace: ns}, ServerURL: trapURL,
		},
	}
}

func secretRows() []hostileRow {
	withSecret := func(name string, data map[string]string) func(string) []client.Object {
		return func(trapURL string) []client.Object {
			return []client.Object{
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-token"}, StringData: data},
				secretAuth(trapURL, name, name+"-token", ""),
			}
		}
	}
	const badChars = "a token is printable ASCII without spaces (it is sent in an HTTP header) (rule " + authconfig.RuleTokenCharacters + ")"
	return []hostileRow{
		{
			name: "secret-missing-key", objects: withSecret("secret-missing-key", map[string]string{"tokn": konnectsim.DefaultToken}),
			reason:  konnectv1alpha1.ReasonInvalidSpec,
			message: []string{"spec.secretRef: Secret ", `/secret-missing-key-token has no key "token" (rule ` + authconfig.RuleSecretKey},
		},
		{
			name: "secret-not-found", objects: func(trapURL string) []client.Object {
				return []client.Object{secretAuth(trapURL, "secret-not-found", "nowhere", "")}
			},
			reason:  konnectv1alpha1.ReasonInvalidReference,
			message: []string{"spec.secretRef: Secret ", "/nowhere not found (rule " + authconfig.RuleSecretMissing},
		},
		{
			name: "secret-token-crlf", objects: withSecret("secret-token-crlf", map[string]string{"token": "kpat_abc\r\nX-Evil: 1"}),
			reason:  konnectv1alpha1.ReasonInvalidSpec,
			message: []string{`spec.secretRef: the token in Secret `, `(key "token") has a line break at byte 8: ` + badChars},
			secret:  "kpat_abc",
		},
		{
			name: "secret-token-nul", objects: withSecret("secret-token-nul", map[string]string{"token": "kpat_abc\x00def"}),
			reason:  konnectv1alpha1.ReasonInvalidSpec,
			message: []string{"has a control character at byte 8: " + badChars},
			secret:  "kpat_abc",
		},
		{
			name: "secret-other-namespace", objects: func(trapURL string) []client.Object {
				return []client.Object{secretAuth(trapURL, "secret-other-namespace", "konnect-token", "kube-system")}
			},
			reason:  konnectv1alpha1.ReasonInvalidSpec,
			message: []string{`spec.secretRef.namespace "kube-system" is not this object's namespace`, "(rule " + authconfig.RuleSecretNamespace},
		},
	}
}

func namespaceRows() []hostileRow {
	otherNS := func(ref *configurationv1alpha1.ControlPlaneRef) *configurationv1alpha1.ControlPlaneRef {
		ref.KonnectNamespacedRef.Namespace = "other"
		return ref
	}
	cpAuthOther := controlPlaneObj("cp-authref-other-namespace", "good-auth")
	cpAuthOther.Spec.KonnectConfiguration.APIAuthConfigurationRef.Namespace = "other"
	svc := serviceObj("service-cpref-other-namespace", "good", "example.com")
	svc.Spec.ControlPlaneRef = otherNS(svc.Spec.ControlPlaneRef)
	route := routeObj("route-serviceref-other-namespace", "good-svc")
	route.Spec.ServiceRef.NamespacedRef.Namespace = "other"
	routeCP := routeObj("route-cpref-other-namespace", "good-svc")
	routeCP.Spec.ControlPlaneRef = otherNS(cpRef("good"))
	consumer := &configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer-cpref-other-namespace"}, Username: "mallory",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: otherNS(cpRef("good"))},
	}
	const crossNS = "cross-namespace references are not supported"
	return []hostileRow{
		{name: "cp-authref-other-namespace", objects: one(cpAuthOther), admission: []string{`"cp-authref-other-namespace" is invalid`, "spec.konnect.authRef", crossNS + ": the KonnectAPIAuthConfiguration must be in this object's namespace"}},
		{name: "service-cpref-other-namespace", objects: one(svc), refused: &refusal{&configurationv1alpha1.KongService{}, konnectv1alpha1.ConditionControlPlaneRefValid},
			reason: konnectv1alpha1.ReasonRefNotPermitted, message: []string{"no KongReferenceGrant in namespace other allows configuration.konghq.com KongService from namespace"}},
		{name: "route-serviceref-other-namespace", objects: one(route), admission: []string{`"route-serviceref-other-namespace" is invalid`, "spec.serviceRef.namespacedRef", crossNS + ": the KongService must be in the route's namespace"}},
		{name: "route-cpref-other-namespace", objects: one(routeCP), refused: &refusal{&configurationv1alpha1.KongRoute{}, konnectv1alpha1.ConditionControlPlaneRefValid},
			reason: konnectv1alpha1.ReasonInvalidReference, message: []string{"controlPlaneRef names KonnectGatewayControlPlane other/good but KongService", "a route lives in its service's control plane"}},
		{name: "consumer-cpref-other-namespace", objects: one(consumer), refused: &refusal{&configurationv1.KongConsumer{}, konnectv1alpha1.ConditionControlPlaneRefValid},
			reason: konnectv1alpha1.ReasonRefNotPermitted, message: []string{"no KongReferenceGrant in namespace other allows configuration.konghq.com KongConsumer from namespace"}},
	}
}

func hugeRows() []hostileRow {
	huge := strings.Repeat("a", mb)
	tags := make([]string, 10000)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%d", i)
	}
	svcHost := serviceObj("service-host-1mb", "good", huge)
	svcTags := serviceObj("service-tags-10000", "good", "example.com")
	svcTags.Spec.Tags = tags
	routePaths := routeObj("route-paths-10000", "good-svc")
	routePaths.Spec.Paths = tags
	routeTags := routeObj("route-tags-10000", "good-svc")
	routeTags.Spec.Tags = tags
	routeHeader := routeObj("route-header-1mb", "good-svc")
	routeHeader.Spec.Headers = map[string]configurationv1alpha1.HeaderValues{"x-big": {huge}}
	consumerName := &configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer-username-1mb"}, Username: huge,
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("good")},
	}
	consumerTags := &configurationv1.KongConsumer{
		ObjectMeta: metav1.ObjectMeta{Name: "consumer-tags-10000"}, Username: "many-tags",
		Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("good"), Tags: tags},
	}
	cpDesc := controlPlaneObj("cp-description-1mb", "good-auth")
	cpDesc.Spec.CreateControlPlaneRequest.Description = &huge
	cpLabel := controlPlaneObj("cp-label-value-long", "good-auth")
	cpLabel.Spec.CreateControlPlaneRequest.Labels = map[string]string{"team": strings.Repeat("a", 64)}
	cpMembers := controlPlaneObj("cp-members-10000", "good-auth")
	cpMembers.Spec.CreateControlPlaneRequest.ClusterType = ptrTo(konnectv1alpha2.ClusterType("CLUSTER_TYPE_CONTROL_PLANE_GROUP"))
	for _, t := range tags {
		cpMembers.Spec.Members = append(cpMembers.Spec.Members, corev1.LocalObjectReference{Name: t})
	}
	tooLong := func(n int) string { return fmt.Sprintf("Too long: may not be more than %d bytes", n) }
	tooMany := func(n int) string { return fmt.Sprintf("Too many: 10000: must have at most %d items", n) }
	return []hostileRow{
		{name: "service-host-1mb", objects: one(svcHost), admission: []string{`"service-host-1mb" is invalid`, "spec.host", tooLong(256)}},
		{name: "service-tags-10000", objects: one(svcTags), admission: []string{`"service-tags-10000" is invalid`, "spec.tags", tooMany(20)}},
		{name: "route-paths-10000", objects: one(routePaths), admission: []string{`"route-paths-10000" is invalid`, "spec.paths", tooMany(128)}},
		{name: "route-tags-10000", objects: one(routeTags), admission: []string{`"route-tags-10000" is invalid`, "spec.tags", tooMany(20)}},
		{name: "route-header-1mb", objects: one(routeHeader), admission: []string{`"route-header-1mb" is invalid`, "spec.headers.x-big[0]", tooLong(1024)}},
		{name: "consumer-username-1mb", objects: one(consumerName), admission: []string{`"consumer-username-1mb" is invalid`, "username", tooLong(256)}},
		{name: "consumer-tags-10000", objects: one(consumerTags), admission: []string{`"consumer-tags-10000" is invalid`, "spec.tags", tooMany(20)}},
		{name: "cp-description-1mb", objects: one(cpDesc), admission: []string{`"cp-description-1mb" is invalid`, "spec.createControlPlaneRequest.description", tooLong(1024)}},
		{name: "cp-label-value-long", objects: one(cpLabel), admission: []string{`"cp-label-value-long" is invalid`, "spec.createControlPlaneRequest.labels", "label keys and values must be 1 to 63 characters long"}},
		{name: "cp-members-10000", objects: one(cpMembers), admission: []string{`"cp-members-10000" is invalid`, "spec.members", tooMany(256)}},
	}
}

// Every row is listed under the hostile-inputs reference (docs/reference/hostile-inputs.md), and every TestHostileKonnect case a row there
// names exists (runs with -short too).
func TestHostileKonnectDocumented(t *testing.T) {
	rows, err := docscheck.HostileRows("../../" + docscheck.HostilePage)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range hostileRows() {
		names = append(names, row.name)
	}
	for _, p := range docscheck.CrossCheck(rows, "TestHostileKonnect", "", names) {
		t.Error(p)
	}
}

// good is what a hostile input must not disturb: Programmed objects and their Konnect IDs.
type good struct {
	objs []client.Object
	ids  map[string]string
}

func (e *env) goodObjects() *good {
	e.t.Helper()
	e.readyControlPlane("good")
	e.create(serviceObj("good-svc", "good", "example.com"))
	e.create(routeObj("good-route", "good-svc"))
	e.create(&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "good-consumer"}, Username: "alice", Spec: configurationv1.KongConsumerSpec{ControlPlaneRef: cpRef("good")}})
	g := &good{
		objs: []client.Object{
			&konnectv1alpha2.KonnectGatewayControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "good"}},
			&configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: "good-svc"}},
			&configurationv1alpha1.KongRoute{ObjectMeta: metav1.ObjectMeta{Name: "good-route"}},
			&configurationv1.KongConsumer{ObjectMeta: metav1.ObjectMeta{Name: "good-consumer"}},
		},
		ids: map[string]string{},
	}
	for _, o := range g.objs {
		e.waitProgrammed(o, o.GetName())
		g.ids[o.GetName()] = konnectID(o)
	}
	e.waitCondition(&konnectv1alpha1.KonnectAPIAuthConfiguration{}, "good-auth", konnectv1alpha1.ConditionAPIAuthValid, metav1.ConditionTrue, "", 10*time.Second)
	return g
}

func konnectID(o client.Object) string {
	switch o := o.(type) {
	case *konnectv1alpha2.KonnectGatewayControlPlane:
		return o.Status.ID
	case *configurationv1alpha1.KongService:
		return o.Status.Konnect.ID
	case *configurationv1alpha1.KongRoute:
		return o.Status.Konnect.ID
	case *configurationv1.KongConsumer:
		return o.Status.Konnect.ID
	}
	return ""
}

// assertUndisturbed: the good objects are still Programmed with the same Konnect IDs.
func (e *env) assertUndisturbed(g *good) {
	e.t.Helper()
	for _, o := range g.objs {
		c, err := e.condition(o, o.GetName(), konnectv1alpha1.ConditionProgrammed)
		if err != nil || c.Status != metav1.ConditionTrue {
			e.t.Errorf("%s no longer Programmed: %v %+v", o.GetName(), err, c)
			continue
		}
		if id := konnectID(o); id != g.ids[o.GetName()] {
			e.t.Errorf("%s: Konnect ID %s, was %s", o.GetName(), id, g.ids[o.GetName()])
		}
	}
}

// TestHostileKonnect: each hostile input to the Konnect operator is refused with the object, the field and the rule;
// nothing is sent to Konnect for it (the simulator counts every request); the good control plane, service, route
// and consumer beside it stay Programmed, and the operator still syncs them afterwards.
func TestHostileKonnect(t *testing.T) {
	e := newEnv(t, envOptions{syncPeriod: time.Hour})
	trap := konnectsim.StartTest(t, konnectsim.Options{})
	g := e.goodObjects()
	e.quiet()
	for _, row := range hostileRows() {
		t.Run(row.name, func(t *testing.T) {
			re := *e
			re.t = t
			before, counters := e.sim.TotalRequests(), e.sim.Counters()
			re.hostile(row, trap.URL())
			if n := e.sim.TotalRequests(); n != before {
				t.Errorf("%d Konnect requests for a hostile input, want 0: %v, before %v", n-before, e.sim.Counters(), counters)
			}
			if n := trap.TotalRequests(); n != 0 {
				t.Errorf("%d Konnect requests with a hostile auth configuration, want 0: %v", n, trap.Counters())
			}
			re.assertUndisturbed(g)
		})
	}
	// The operator still serves: an edit of the good service reaches Konnect.
	svc := &configurationv1alpha1.KongService{}
	e.mutate(svc, "good-svc", func() { svc.Spec.Host = "still-served.example.com" })
	e.eventually(30*time.Second, "good service updated in Konnect", func() error {
		if got := e.simByUID(konnectsim.KindService, svc.UID); len(got) != 1 || got[0].JSON["host"] != "still-served.example.com" {
			return fmt.Errorf("services in Konnect: %+v", got)
		}
		return nil
	})
	e.assertUndisturbed(g)
}

// quiet waits until the simulator has received no request for a second: the good objects are settled (their last
// status writes may still wake the auth configuration's loop, which asks Konnect for the organization).
func (e *env) quiet() {
	e.t.Helper()
	last, since := e.sim.TotalRequests(), time.Now()
	e.eventually(30*time.Second, "no Konnect request for a second", func() error {
		if n := e.sim.TotalRequests(); n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) < time.Second {
			return fmt.Errorf("%d requests so far", last)
		}
		return nil
	})
}

// hostile creates the row's objects and checks what the user sees.
func (e *env) hostile(row hostileRow, trapURL string) {
	e.t.Helper()
	objs := row.objects(trapURL)
	for _, o := range objs[:len(objs)-1] {
		e.create(o)
	}
	bad := objs[len(objs)-1]
	bad.SetNamespace(e.ns)
	err := e.c.Create(e.ctx, bad)
	if row.admission != nil {
		if err == nil || !apierrors.IsInvalid(err) {
			e.t.Fatalf("creating %s: error %v, want the API server to refuse it", bad.GetName(), err)
		}
		msg := err.Error()
		if len(msg) > 600 {
			msg = msg[:600] + "..."
		}
		for _, want := range row.admission {
			if !strings.Contains(err.Error(), want) {
				e.t.Errorf("error %q does not contain %q", msg, want)
			}
		}
		e.t.Logf("what the user sees: %s", msg)
		if row.secret != "" && strings.Contains(err.Error(), row.secret) {
			e.t.Errorf("the error quotes the token")
		}
		return
	}
	if err != nil {
		e.t.Fatalf("creating %s: %v", bad.GetName(), err)
	}
	if row.refused != nil {
		c := e.waitCondition(row.refused.obj, bad.GetName(), row.refused.typ, metav1.ConditionFalse, row.reason, 30*time.Second)
		for _, want := range row.message {
			if !strings.Contains(c.Message, want) {
				e.t.Errorf("%s message %q does not contain %q", row.refused.typ, c.Message, want)
			}
		}
		e.t.Logf("what the user sees: %s %s: %s=False %s: %s", bad.GetObjectKind().GroupVersionKind().Kind, bad.GetName(), c.Type, c.Reason, c.Message)
		return
	}
	c := e.waitCondition(&konnectv1alpha1.KonnectAPIAuthConfiguration{}, bad.GetName(), konnectv1alpha1.ConditionAPIAuthValid, metav1.ConditionFalse, row.reason, 30*time.Second)
	for _, want := range row.message {
		if !strings.Contains(c.Message, want) {
			e.t.Errorf("APIAuthValid message %q does not contain %q", c.Message, want)
		}
	}
	if row.secret != "" && strings.Contains(c.Message, row.secret) {
		e.t.Errorf("the condition quotes the token")
	}
	e.t.Logf("what the user sees: KonnectAPIAuthConfiguration %s: APIAuthValid=False %s: %s", bad.GetName(), c.Reason, c.Message)
	// A control plane using it waits, and says why.
	cp := controlPlaneObj(bad.GetName()+"-cp", bad.GetName())
	e.create(cp)
	ref := e.waitCondition(cp, cp.Name, konnectv1alpha1.ConditionAPIAuthRefValid, metav1.ConditionFalse, konnectv1alpha1.ReasonInvalidReference, 30*time.Second)
	if !strings.Contains(ref.Message, bad.GetName()+" is not valid yet (condition APIAuthValid)") {
		e.t.Errorf("control plane's APIAuthRefValid message %q", ref.Message)
	}
}
