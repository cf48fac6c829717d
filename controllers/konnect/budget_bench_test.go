package konnect

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/konnectsim"
)

// BenchmarkKonnectBudget: entities of every kind the operator syncs (default 10,000: KONNECT_BUDGET_ENTITIES), in
// 10 control planes, created by the konnect-operator running as a process against a simulator that allows each
// organization 3,000 requests per minute and says so in its answers (RateLimit-* headers), as Konnect does. The
// operator's own ceiling (--konnect-rate-limit 100/s) is above the budget: what paces it is the budget it reads.
// Reported: s-to-programmed (from the start of the process), floor-s (the least time the requests it made need:
// a minute's budget at once, then 3,000 a minute), 429s (answers over the budget; target 0) and requests/entity.
//
//	go test -run '^$' -bench BenchmarkKonnectBudget -benchtime 1x ./controllers/konnect/
func BenchmarkKonnectBudget(b *testing.B) {
	if kubeAPI == nil {
		b.Skip("no local control plane (-short)")
	}
	entities := 10_000
	if v, err := strconv.Atoi(os.Getenv("KONNECT_BUDGET_ENTITIES")); err == nil && v > 0 {
		entities = v
	}
	bin := buildOperator(b)
	for range b.N {
		benchmarkBudget(b, bin, entities)
	}
}

// budgetPerMinute is Konnect's budget in the benchmark: requests per organization per minute.
const budgetPerMinute = 3000

func benchmarkBudget(b *testing.B, bin string, entities int) {
	sim := konnectsim.StartTest(b, konnectsim.Options{Latency: 20 * time.Millisecond, Budget: budgetPerMinute})
	e, kinds := declareEveryKind(b, sim, 10, entities/10)
	op := startOperatorProcess(b, bin, e.ns, "--konnect-rate-limit", "100", "--kube-api-qps", "500", "--kube-api-burst", "1000")
	start := time.Now()
	e.eventually(30*time.Minute, "all Programmed", func() error {
		if err := op.alive(); err != nil {
			return err
		}
		if left := notProgrammedOf(e, kinds); left != 0 {
			time.Sleep(2 * time.Second) // listing 10,000 objects costs the machine too
			return fmt.Errorf("%d not Programmed", left)
		}
		return nil
	})
	took := time.Since(start)
	requests := sim.TotalRequests()
	injected := sim.Injected()
	floor := max(0, float64(requests-budgetPerMinute)) / (budgetPerMinute / 60.0)
	b.ReportMetric(took.Seconds(), "s-to-programmed")
	b.ReportMetric(floor, "floor-s")
	b.ReportMetric(float64(injected.Throttled), "429s")
	b.ReportMetric(float64(requests)/float64(entities), "requests/entity")
	b.Logf("%d entities of %d kinds Programmed in %s under %d requests/min: %d requests (floor %.0fs), %d answers 429; %v",
		entities, len(kinds), took.Round(time.Millisecond), budgetPerMinute, requests, floor, injected.Throttled, sim.Counters())
}

// declareEveryKind declares, in a new namespace, an auth configuration, controlPlanes control planes and perCP
// entities in each, spread over the kinds: 5% each of the nine kinds of upstreams, TLS material, keys and vaults
// (upstreams, targets, certificates, SNIs, CA certificates, data plane certificates, key sets, keys and vaults, with
// the KongReferenceGrant the cluster-scoped vaults need), and of the rest a quarter services, a quarter routes, a
// quarter consumers, 5% consumer groups, the remainder plugins bound to services. It returns the kinds to watch.
func declareEveryKind(b *testing.B, sim *konnectsim.Server, controlPlanes, perCP int) (*env, []schema.GroupVersionKind) {
	e := newScaleEnv(b, sim)
	e.create(authConfig("auth", sim.URL()))
	rl := kongPlugin("rate-limit", "rate-limiting", `{"minute":5,"policy":"local"}`)
	rl.Namespace = e.ns
	e.create(rl)
	e.create(grantObj("vaults", "KongVault", ""))
	each := perCP / 20
	rest := perCP - 9*each
	services, groups := rest/4, rest/20
	bindings := rest - 3*services - groups
	for c := range controlPlanes {
		cp := fmt.Sprintf("cp-%d", c)
		e.create(controlPlaneObj(cp, "auth"))
		parallel(16, services, func(i int) {
			svc := fmt.Sprintf("%s-svc-%d", cp, i)
			e.createAsync(serviceObj(svc, cp, svc+".example.com"))
			e.createAsync(routeObj(fmt.Sprintf("%s-route-%d", cp, i), svc))
			e.createAsync(consumerObj(fmt.Sprintf("%s-user-%d", cp, i), cp))
			if i < bindings {
				e.createAsync(serviceBinding(fmt.Sprintf("%s-rl-%d", cp, i), rl.Name, svc))
			}
		})
		parallel(16, groups, func(i int) { e.createAsync(consumerGroupObj(fmt.Sprintf("%s-group-%d", cp, i), cp)) })
		parallel(16, each, func(i int) { e.declareGatewayKinds(cp, i) })
	}
	if b.Failed() {
		b.FailNow()
	}
	kinds := []schema.GroupVersionKind{
		{Group: "konnect.konghq.com", Version: "v1alpha2", Kind: "KonnectGatewayControlPlane"},
		{Group: "configuration.konghq.com", Version: "v1alpha1", Kind: "KongService"},
		{Group: "configuration.konghq.com", Version: "v1alpha1", Kind: "KongRoute"},
		{Group: "configuration.konghq.com", Version: "v1", Kind: "KongConsumer"},
		{Group: "configuration.konghq.com", Version: "v1beta1", Kind: "KongConsumerGroup"},
		{Group: "configuration.konghq.com", Version: "v1alpha1", Kind: "KongPluginBinding"},
	}
	for _, kind := range gatewayKindNames {
		kinds = append(kinds, schema.GroupVersionKind{Group: "configuration.konghq.com", Version: "v1alpha1", Kind: kind})
	}
	return e, kinds
}

// declareGatewayKinds declares the i-th object of each of the nine kinds of upstreams, TLS material, keys and
// vaults in control plane cp.
func (e *env) declareGatewayKinds(cp string, i int) {
	name := func(kind string) string { return fmt.Sprintf("%s-%s-%d", cp, kind, i) }
	e.createAsync(upstreamObj(name("up"), cp))
	e.createAsync(targetObj(name("target"), name("up"), fmt.Sprintf("10.0.%d.%d:8080", i/250, i%250+1)))
	e.createAsync(certificateObj(name("cert"), cp, name("cert")+".example.com"))
	e.createAsync(sniObj(name("sni"), name("cert"), name("sni")+".example.com"))
	e.createAsync(caCertificateObj(name("ca"), cp))
	e.createAsync(dpCertificateObj(name("dp"), cp))
	e.createAsync(keySetObj(name("ks"), cp))
	e.createAsync(keyObj(name("key"), cp, name("ks")))
	v := e.vaultObj(name("vault"), cp)
	e.createAsync(v)
}

// notProgrammedOf counts the objects of kinds in e's namespace that are not Programmed (-1 when they cannot be
// listed). Of a cluster-scoped kind (KongVault) it counts those named for e's namespace: another benchmark's are not
// this one's.
func notProgrammedOf(e *env, kinds []schema.GroupVersionKind) int {
	left := 0
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := e.c.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
			return -1
		}
		for _, item := range list.Items {
			if item.GetNamespace() == "" && !strings.HasPrefix(item.GetName(), e.ns+"-") {
				continue
			}
			raw, _, _ := unstructured.NestedSlice(item.Object, "status", "conditions")
			var conds []metav1.Condition
			for _, c := range raw {
				if m, ok := c.(map[string]any); ok {
					conds = append(conds, metav1.Condition{Type: fmt.Sprint(m["type"]), Status: metav1.ConditionStatus(fmt.Sprint(m["status"]))})
				}
			}
			if !programmed(conds) {
				left++
			}
		}
	}
	return left
}
