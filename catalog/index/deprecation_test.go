package index

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/almproject/alm/catalog/fbc"
	"github.com/almproject/alm/catalog/internal/cattest"
)

// deprecations is an olm.deprecations document of package p; each entry is "schema name=message".
func deprecations(entries ...string) string {
	var parts []string
	for _, e := range entries {
		ref, msg, _ := strings.Cut(e, "=")
		schema, name, _ := strings.Cut(ref, " ")
		parts = append(parts, fmt.Sprintf(`{"reference":{"schema":%q,"name":%q},"message":%q}`, schema, name, msg))
	}
	return `{"schema":"olm.deprecations","package":"p","entries":[` + strings.Join(parts, ",") + "]}\n"
}

func TestResolvePrefersWhatIsNotDeprecated(t *testing.T) {
	for _, tc := range []struct {
		name         string
		deprecations string
		from         string
		chosen       string // "" for none
		detail       string // in the chosen candidate's detail
		others       []string
		deprecated   string // Result.Deprecated.Message()
	}{
		{name: "nothing deprecated", chosen: "p.v1.2.0", detail: "highest version in the channel"},
		{name: "the newest bundle deprecated: the next one is chosen",
			deprecations: deprecations("olm.bundle p.v1.2.0=1.2.0 loses data; use 1.1.0"),
			chosen:       "p.v1.1.0", detail: "highest version in the channel",
			others: []string{"p.v1.2.0: Deprecated: bundle p.v1.2.0 deprecated: 1.2.0 loses data; use 1.1.0; p.v1.1.0, which is not deprecated, is preferred"}},
		{name: "every bundle of the channel deprecated: the highest is chosen, saying so",
			deprecations: deprecations("olm.channel stable=stable ends; follow fast"),
			chosen:       "p.v1.2.0", detail: "highest version in the channel (every candidate that fits is deprecated: channel stable deprecated: stable ends; follow fast)",
			deprecated: "bundle", // replaced below
		},
		{name: "an upgrade skips a deprecated successor", from: "1.0.0",
			deprecations: deprecations("olm.bundle p.v1.2.0=broken"),
			chosen:       "p.v1.1.0", detail: "highest version reachable from 1.0.0"},
		{name: "the installed bundle and package deprecated", from: "1.2.0",
			deprecations: deprecations("olm.package=p is no longer maintained", "olm.bundle p.v1.2.0=broken"),
			deprecated:   "bundle p.v1.2.0 deprecated: broken; package deprecated: p is no longer maintained"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fbcContents(t, "p", "stable", "stable: 1.0.0, 1.1.0<1.0.0, 1.2.0<1.1.0")
			c.Add(fbc.Load(strings.NewReader(tc.deprecations), "deprecations.json"))
			ix := New(Catalog{Name: "c", Contents: c})
			if len(ix.Problems()) > 0 {
				t.Fatalf("problems: %v", ix.Problems())
			}
			res, err := ix.Resolve(Request{Package: "p", From: tc.from})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.chosen == "" && res.Chosen != nil:
				t.Fatalf("chose %s, want none", res.Chosen.Name)
			case tc.chosen != "" && (res.Chosen == nil || res.Chosen.Name != tc.chosen || res.Chosen.Detail != tc.detail):
				t.Fatalf("chose %+v, want %s (%s)\n%s", res.Chosen, tc.chosen, tc.detail, res.Explain())
			}
			for _, want := range tc.others {
				if !strings.Contains(candidateLines(res), want) {
					t.Errorf("candidates:\n%s\nwant a line %q", candidateLines(res), want)
				}
			}
			want := tc.deprecated
			if want == "bundle" {
				want = "channel stable deprecated: stable ends; follow fast"
			}
			if got := res.Deprecated.Message(); got != want {
				t.Errorf("Result.Deprecated %q, want %q", got, want)
			}
			if want != "" && !strings.Contains(res.Explain(), "deprecated: "+want) {
				t.Errorf("Explain does not show the deprecation:\n%s", res.Explain())
			}
		})
	}
}

func candidateLines(res Result) string {
	var sb strings.Builder
	for _, c := range res.Candidates {
		fmt.Fprintf(&sb, "%s: %s: %s\n", c.Name, c.Reason, c.Detail)
	}
	return sb.String()
}

// TestDeprecationsBesideBundleDirectories: a directory catalog carries olm.deprecations in a file beside its
// bundle directories, as the Konnect operator's catalog could.
func TestDeprecationsBesideBundleDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		cattest.CopyTree(t, "../../bundles/konnect-operator/"+v, dir+"/konnect-operator/"+v)
	}
	cattest.WriteFile(t, dir+"/konnect-operator/deprecations.yaml", `schema: olm.deprecations
package: konnect-operator
entries:
- reference: {schema: olm.bundle, name: konnect-operator.v1.2.0}
  message: konnect-operator 1.2.0 is withdrawn; use 1.1.0
`)
	contents, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := New(Catalog{Name: "dir", Contents: contents})
	res, err := ix.Resolve(Request{Package: "konnect-operator", From: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil || res.Chosen.Name != "konnect-operator.v1.1.0" {
		t.Fatalf("want konnect-operator.v1.1.0 (1.2.0 is deprecated):\n%s", res.Explain())
	}
	// Rendering the catalog (catalog render, catalog push) keeps the deprecations.
	cfg, err := ix.DeclarativeConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Deprecations) != 1 || len(cfg.Deprecations[0].Entries) != 1 {
		t.Errorf("DeclarativeConfig's deprecations %+v; want the one document", cfg.Deprecations)
	}
	var rendered bytes.Buffer
	if err := ix.WriteCatalog("", "json", &rendered); err != nil {
		t.Fatal(err)
	}
	again, err := New(Catalog{Name: "dir", Contents: fbc.Load(&rendered, "rendered.json")}).Resolve(Request{Package: "konnect-operator", From: "1.0.0"})
	if err != nil || again.Explain() != res.Explain() {
		t.Errorf("the rendered catalog resolves otherwise (%v):\n%s\nwant:\n%s", err, again.Explain(), res.Explain())
	}
	if !strings.Contains(res.Explain(), "konnect-operator.v1.2.0 (1.2.0) [dir]: Deprecated: bundle konnect-operator.v1.2.0 deprecated: konnect-operator 1.2.0 is withdrawn; use 1.1.0") {
		t.Errorf("the explanation does not say 1.2.0 is deprecated:\n%s", res.Explain())
	}
}
