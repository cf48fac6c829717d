package index

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/almproject/alm/catalog/bundle"
	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
)

// fbcContents builds a catalog: package p with channels given as "name: entry, entry..." where an entry is
// "version[<replaced][~skipped...][@skipRange]" and every version named gets a bundle.
func fbcContents(t *testing.T, pkg, defaultChannel string, channels ...string) *fbc.Contents {
	t.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"schema":"olm.package","name":%q,"defaultChannel":%q}`+"\n", pkg, defaultChannel)
	versions := map[string]bool{}
	for _, ch := range channels {
		name, list, _ := strings.Cut(ch, ":")
		var entries []declcfg.ChannelEntry
		for _, spec := range strings.Split(list, ",") {
			spec = strings.TrimSpace(spec)
			if spec == "" {
				continue
			}
			e := declcfg.ChannelEntry{}
			if i := strings.Index(spec, "@"); i >= 0 {
				spec, e.SkipRange = spec[:i], spec[i+1:]
			}
			parts := strings.Split(spec, "~")
			spec = parts[0]
			for _, s := range parts[1:] {
				e.Skips = append(e.Skips, pkg+".v"+s)
			}
			if v, r, ok := strings.Cut(spec, "<"); ok {
				spec, e.Replaces = v, pkg+".v"+r
			}
			e.Name = pkg + ".v" + spec
			versions[spec] = true
			entries = append(entries, e)
		}
		var eb strings.Builder
		for i, e := range entries {
			if i > 0 {
				eb.WriteString(",")
			}
			fmt.Fprintf(&eb, `{"name":%q,"replaces":%q,"skipRange":%q,"skips":[`, e.Name, e.Replaces, e.SkipRange)
			for j, s := range e.Skips {
				if j > 0 {
					eb.WriteString(",")
				}
				fmt.Fprintf(&eb, "%q", s)
			}
			eb.WriteString("]}")
		}
		fmt.Fprintf(&sb, `{"schema":"olm.channel","package":%q,"name":%q,"entries":[%s]}`+"\n", pkg, strings.TrimSpace(name), eb.String())
	}
	for _, v := range sortedKeys(versions) {
		sb.WriteString(cattest.BundleDoc(pkg, v))
	}
	c := fbc.Load(strings.NewReader(sb.String()), pkg+".json")
	if len(c.Problems) > 0 {
		t.Fatalf("fixture problems: %v", c.Problems)
	}
	return c
}

func TestResolve(t *testing.T) {
	// stable: 1.0.0 -> 1.1.0 -> 1.2.0; 1.3.0 replaces 1.2.0 and skips 1.1.0; 2.0.0 has skipRange >=1.0.0 <2.0.0.
	// fast: 1.3.0, 2.0.0, 2.1.0. 1.2.1 is a hotfix that only skipRanges 1.2.0.
	main := fbcContents(t, "p", "stable",
		"stable: 1.0.0, 1.1.0<1.0.0, 1.2.0<1.1.0, 1.2.1@>=1.2.0 <1.2.1, 1.3.0<1.2.0~1.1.0, 2.0.0<1.3.0@>=1.0.0 <2.0.0",
		"fast: 1.3.0, 2.0.0<1.3.0, 2.1.0<2.0.0",
	)
	ix := New(Catalog{Name: "main", Contents: main})
	if len(ix.Problems()) != 0 {
		t.Fatalf("problems: %v", ix.Problems())
	}
	tests := []struct {
		name    string
		req     Request
		chosen  string // "" for none
		path    []string
		reasons map[string]Reason // bundle version -> reason
		err     error
	}{
		{name: "default channel, newest", req: Request{Package: "p"}, chosen: "2.0.0",
			reasons: map[string]Reason{"2.1.0": ReasonOtherChannel, "1.3.0": ReasonLowerVersion, "1.0.0": ReasonLowerVersion}},
		{name: "named channel", req: Request{Package: "p", Channel: "fast"}, chosen: "2.1.0",
			reasons: map[string]Reason{"1.0.0": ReasonOtherChannel, "2.0.0": ReasonLowerVersion}},
		{name: "range", req: Request{Package: "p", Range: "<1.3.0"}, chosen: "1.2.1",
			reasons: map[string]Reason{"2.0.0": ReasonOutOfRange, "1.3.0": ReasonOutOfRange, "1.2.0": ReasonLowerVersion}},
		{name: "range with nothing in it", req: Request{Package: "p", Range: ">=3.0.0"}, chosen: ""},
		{name: "upgrade by replaces chain reaches the head", req: Request{Package: "p", From: "1.0.0"}, chosen: "2.0.0",
			path:    []string{"p.v1.0.0", "p.v2.0.0"},
			reasons: map[string]Reason{"1.0.0": ReasonInstalled, "1.1.0": ReasonLowerVersion}},
		{name: "upgrade within range follows replaces", req: Request{Package: "p", From: "1.0.0", Range: "<1.3.0"}, chosen: "1.2.1",
			path:    []string{"p.v1.0.0", "p.v1.1.0", "p.v1.2.0", "p.v1.2.1"},
			reasons: map[string]Reason{"1.3.0": ReasonOutOfRange}},
		{name: "skips edge", req: Request{Package: "p", From: "1.1.0", Range: "<2.0.0"}, chosen: "1.3.0",
			path: []string{"p.v1.1.0", "p.v1.3.0"}, reasons: map[string]Reason{"1.0.0": ReasonNotNewer, "1.1.0": ReasonInstalled}},
		{name: "hotfix not reachable from 1.1.0 except via 1.2.0", req: Request{Package: "p", From: "1.1.0", Range: "<1.3.0"}, chosen: "1.2.1",
			path: []string{"p.v1.1.0", "p.v1.2.0", "p.v1.2.1"}},
		{name: "installed version unknown to the catalog: skipRange only", req: Request{Package: "p", From: "1.0.5"}, chosen: "2.0.0",
			path: []string{"1.0.5", "p.v2.0.0"}, reasons: map[string]Reason{"1.1.0": ReasonNotSuccessor, "1.3.0": ReasonNotSuccessor}},
		{name: "installed is the newest", req: Request{Package: "p", From: "2.0.0"}, chosen: "",
			reasons: map[string]Reason{"2.0.0": ReasonInstalled, "1.3.0": ReasonNotNewer}},
		{name: "not a successor in fast", req: Request{Package: "p", Channel: "fast", From: "1.2.1"}, chosen: "",
			reasons: map[string]Reason{"1.3.0": ReasonNotSuccessor, "2.1.0": ReasonNotSuccessor}},
		{name: "tolerant installed version", req: Request{Package: "p", From: "v1.3"}, chosen: "2.0.0"},
		{name: "unknown package", req: Request{Package: "nope"}, err: ErrPackageNotFound},
		{name: "unknown channel", req: Request{Package: "p", Channel: "nope"}, err: ErrChannelNotFound},
		{name: "bad range", req: Request{Package: "p", Range: ">>1"}, err: ErrInvalidRequest},
		{name: "bad installed version", req: Request{Package: "p", From: "one"}, err: ErrInvalidRequest},
		{name: "catalog filter", req: Request{Package: "p", Catalogs: []string{"other"}}, err: ErrPackageNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Resolve(tt.req)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			got := ""
			if res.Chosen != nil {
				got = res.Chosen.Version.String()
			}
			if got != tt.chosen {
				t.Fatalf("chose %q, want %q:\n%s", got, tt.chosen, res.Explain())
			}
			if tt.path != nil && !reflect.DeepEqual(res.Path, tt.path) {
				t.Errorf("path %v, want %v", res.Path, tt.path)
			}
			byVersion := map[string]Reason{}
			for _, c := range res.Candidates {
				byVersion[c.Version.String()] = c.Reason
				if c.Reason == "" || c.Detail == "" {
					t.Errorf("candidate %s has no reason or detail", c.Name)
				}
			}
			for v, want := range tt.reasons {
				if byVersion[v] != want {
					t.Errorf("%s: reason %q, want %q\n%s", v, byVersion[v], want, res.Explain())
				}
			}
			if len(res.Candidates) != 7 {
				t.Errorf("want every bundle as a candidate, got %d", len(res.Candidates))
			}
		})
	}
}

func TestResolveCatalogPriority(t *testing.T) {
	low := fbcContents(t, "p", "stable", "stable: 1.0.0, 1.1.0<1.0.0, 1.2.0<1.1.0")
	high := fbcContents(t, "p", "stable", "stable: 1.0.0, 1.1.0<1.0.0")
	ix := New(Catalog{Name: "low", Priority: -1, Contents: low}, Catalog{Name: "high", Priority: 10, Contents: high})
	if got := ix.Catalogs(); !reflect.DeepEqual(got, []string{"high", "low"}) {
		t.Fatalf("catalog order %v", got)
	}
	res, err := ix.Resolve(Request{Package: "p", Range: "<1.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen.Catalog != "high" || res.Chosen.Version.String() != "1.1.0" {
		t.Fatalf("want 1.1.0 from high:\n%s", res.Explain())
	}
	for _, c := range res.Candidates {
		if c.Catalog == "low" && c.Version.String() == "1.1.0" && c.Reason != ReasonLowerPriorityCatalog {
			t.Errorf("low 1.1.0: %s", c.Reason)
		}
	}
	// A higher version wins over priority (the pipeline orders by version, then priority).
	res, _ = ix.Resolve(Request{Package: "p"})
	if res.Chosen.Catalog != "low" || res.Chosen.Version.String() != "1.2.0" {
		t.Fatalf("want 1.2.0 from low:\n%s", res.Explain())
	}
	// Upgrades cross catalogs: 1.1.0 from high reaches 1.2.0 in low.
	res, _ = ix.Resolve(Request{Package: "p", From: "1.0.0"})
	if res.Chosen.Version.String() != "1.2.0" || !reflect.DeepEqual(res.Path, []string{"p.v1.0.0", "p.v1.1.0", "p.v1.2.0"}) {
		t.Fatalf("cross-catalog upgrade: %v\n%s", res.Path, res.Explain())
	}
	// Restricting to one catalog.
	res, _ = ix.Resolve(Request{Package: "p", Catalogs: []string{"high"}})
	if res.Chosen.Catalog != "high" || res.Chosen.Version.String() != "1.1.0" {
		t.Fatalf("restricted:\n%s", res.Explain())
	}
	for _, c := range res.Candidates {
		if c.Catalog == "low" && c.Reason != ReasonCatalogNotSelected {
			t.Errorf("low candidate %s: %s", c.Name, c.Reason)
		}
	}
	if !strings.Contains(res.Explain(), "CatalogNotSelected") {
		t.Errorf("explain lacks reasons:\n%s", res.Explain())
	}
}

func TestExplain(t *testing.T) {
	ix := New(Catalog{Name: "c", Contents: fbcContents(t, "p", "stable", "stable: 1.0.0, 1.1.0<1.0.0", "beta: 2.0.0")})
	res, err := ix.Resolve(Request{Package: "p", From: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	want := `package p, channel stable (default), installed 1.0.0
chosen: p.v1.1.0 (1.1.0) from catalog c: highest version reachable from 1.0.0
upgrade path: p.v1.0.0 -> p.v1.1.0
not chosen:
  p.v2.0.0 (2.0.0) [c]: OtherChannel: not in channel stable (channels: beta)
  p.v1.0.0 (1.0.0) [c]: Installed: is the installed version
`
	if got := res.Explain(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestUpgradesFromAndOwners(t *testing.T) {
	ix := New(Catalog{Name: "c", Contents: fbcContents(t, "p", "stable",
		"stable: 1.0.0, 1.1.0<1.0.0, 1.2.0<1.1.0~1.0.0, 2.0.0@>=1.0.0 <2.0.0")})
	edges := ix.UpgradesFrom("p", semver.MustParse("1.0.0"), "")
	var got []string
	for _, e := range edges {
		got = append(got, e.Entry.Bundle.Name+":"+string(e.Kind))
	}
	want := []string{"p.v2.0.0:skipRange", "p.v1.2.0:skips", "p.v1.1.0:replaces"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UpgradesFrom: %v, want %v", got, want)
	}
	gvk := schema.GroupVersionKind{Group: "p.example.com", Version: "v1", Kind: "Thing"}
	owners := ix.Owners(gvk)
	if len(owners) != 4 || owners[0].Version.String() != "2.0.0" {
		t.Errorf("Owners: %v", owners)
	}
	if pk := ix.OwnerPackages(gvk); !reflect.DeepEqual(pk, []string{"p"}) {
		t.Errorf("OwnerPackages: %v", pk)
	}
	if len(ix.Owners(schema.GroupVersionKind{Kind: "Nothing"})) != 0 {
		t.Error("owners of an unknown kind")
	}
	if b := ix.Bundle("p", "p.v1.1.0"); b == nil || b.Version.String() != "1.1.0" {
		t.Errorf("Bundle: %v", b)
	}
	if _, err := ix.Bundle("p", "p.v1.1.0").OperatorVersion("ns"); !errors.Is(err, bundle.ErrNoManifests) {
		t.Errorf("FBC bundle without objects: %v", err)
	}
}
