package index

import (
	"reflect"
	"testing"
)

// A version rolled back from (Request.Exclude) is not offered again, with the reason shown; a version that
// replaces it is offered, and the upgrade path goes straight to it from the installed version.
func TestResolveExclude(t *testing.T) {
	main := fbcContents(t, "p", "stable", "stable: 1.0.0, 2.0.0<1.0.0, 2.0.1<2.0.0, 2.1.0<2.0.1")
	ix := New(Catalog{Name: "main", Contents: main})
	bad := map[string]string{"p.v2.0.0": "p.v2.0.0 was not available for 5m0s after taking over"}
	tests := []struct {
		name   string
		req    Request
		chosen string
		path   []string
		reason map[string]Reason
	}{
		{name: "excluded head, nothing else published", req: Request{Package: "p", From: "1.0.0", Exclude: bad, Range: "<2.0.1"}, chosen: "",
			reason: map[string]Reason{"2.0.0": ReasonRolledBack, "2.0.1": ReasonOutOfRange}},
		{name: "a version that replaces the excluded one is offered, path skips it", req: Request{Package: "p", From: "1.0.0", Exclude: bad, Range: "<2.1.0"},
			chosen: "2.0.1", path: []string{"p.v1.0.0", "p.v2.0.1"}, reason: map[string]Reason{"2.0.0": ReasonRolledBack}},
		{name: "longer paths keep their other hops", req: Request{Package: "p", From: "1.0.0", Exclude: bad},
			chosen: "2.1.0", path: []string{"p.v1.0.0", "p.v2.0.1", "p.v2.1.0"}},
		{name: "without exclusions the path goes through it", req: Request{Package: "p", From: "1.0.0", Range: "<2.1.0"},
			chosen: "2.0.1", path: []string{"p.v1.0.0", "p.v2.0.0", "p.v2.0.1"}},
		{name: "first install does not choose it either", req: Request{Package: "p", Exclude: bad, Range: "<2.0.1"}, chosen: "1.0.0",
			reason: map[string]Reason{"2.0.0": ReasonRolledBack}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Resolve(tt.req)
			if err != nil {
				t.Fatal(err)
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
			for _, c := range res.Candidates {
				if want, ok := tt.reason[c.Version.String()]; ok && c.Reason != want {
					t.Errorf("%s: reason %q, want %q\n%s", c.Name, c.Reason, want, res.Explain())
				}
				if c.Reason == ReasonRolledBack && c.Detail != bad[c.Name] {
					t.Errorf("%s: detail %q, want the rollback's reason", c.Name, c.Detail)
				}
			}
		})
	}
}
