package loops

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/almproject/alm/controllers/internal/installer"
)

func TestSelect(t *testing.T) {
	saved := All
	t.Cleanup(func() { All = saved })
	All = []Loop{
		{Name: "catalogsource", Group: GroupCatalog},
		{Name: "apptype", Group: GroupCatalog},
		{Name: "install", Group: GroupLifecycle},
		{Name: "gc", Group: GroupLifecycle},
	}
	cases := []struct {
		spec    string
		want    []string
		wantErr string
	}{
		{spec: "all", want: []string{"catalogsource", "apptype", "install", "gc"}},
		{spec: "catalog", want: []string{"catalogsource", "apptype"}},
		{spec: "lifecycle", want: []string{"install", "gc"}},
		{spec: "gc, apptype", want: []string{"apptype", "gc"}}, // registry order, spaces ignored
		{spec: "catalog,gc", want: []string{"catalogsource", "apptype", "gc"}},
		{spec: "", want: []string{}},
		{spec: "instll", wantErr: `unknown loop or group "instll"; known: all, catalog, lifecycle, apptype, catalogsource, gc, install`},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := Select(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Select(%q) error = %v, want %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(Names(got), tc.want) {
				t.Fatalf("Select(%q) = %v, want %v", tc.spec, Names(got), tc.want)
			}
		})
	}
}

// TestEverySelectionRemovesTheFinalizersItAdds tries every subset of the real loops: a selection Select accepts
// never adds a finalizer it does not remove, and a refused one says which loop to add.
func TestEverySelectionRemovesTheFinalizersItAdds(t *testing.T) {
	names := Names(All)
	accepted := 0
	for mask := 0; mask < 1<<len(names); mask++ {
		var spec []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				spec = append(spec, n)
			}
		}
		selected, err := Select(strings.Join(spec, ","))
		if err != nil {
			if !strings.Contains(err.Error(), "add gc to --loops") {
				t.Errorf("Select(%v) refused without saying what to add: %v", spec, err)
			}
			continue
		}
		accepted++
		// The facts, stated independently of Select: install and upgrade add the cleanup finalizer, gc removes it.
		names := Names(selected)
		if (slices.Contains(names, "install") || slices.Contains(names, "upgrade")) && !slices.Contains(names, "gc") {
			t.Errorf("Select(%v) accepted without gc: deleted OperatorVersions would keep their cleanup finalizer", spec)
		}
	}
	for _, spec := range []string{"all", GroupCatalog, GroupLifecycle, "install,gc", "upgrade,gc"} {
		if _, err := Select(spec); err != nil {
			t.Errorf("Select(%q): %v", spec, err)
		}
	}
	if _, err := Select("install,upgrade"); err == nil {
		t.Error(`Select("install,upgrade") accepted: deleted OperatorVersions would keep their cleanup finalizer`)
	}
	t.Logf("%d of %d selections accepted", accepted, 1<<len(names))
}

// The catalog loops create versions with the cleanup finalizer only when gc, which removes it, runs with them.
func TestVersionFinalizers(t *testing.T) {
	for spec, want := range map[string]int{"all": 1, "catalog,lifecycle": 1, "catalog": 0, "apptype,gc": 1, "lifecycle": 1} {
		selected, err := Select(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := VersionFinalizers(selected); len(got) != want || want == 1 && got[0] != installer.Finalizer {
			t.Errorf("--loops %s: version finalizers %v, want %d", spec, got, want)
		}
	}
}
