package loops

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/almproject/alm/controllers/internal/cleanup"
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

// TestEverySelectionRemovesTheFinalizersItAdds tries every subset of the real loops: each loop that adds a
// finalizer removes it too (the cleanup finalizer belongs to install and upgrade alone), so every selection is
// accepted; TestDeletionUnderEveryLoopSelection (test/integration) deletes a version under each.
func TestEverySelectionRemovesTheFinalizersItAdds(t *testing.T) {
	names := Names(All)
	for _, l := range All {
		for _, f := range l.AddsFinalizers {
			if !slices.Contains(l.RemovesFinalizers, f) {
				t.Errorf("loop %s adds finalizer %s and does not remove it: a selection without its remover would strand it", l.Name, f)
			}
		}
	}
	for mask := 0; mask < 1<<len(names); mask++ {
		var spec []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				spec = append(spec, n)
			}
		}
		if _, err := Select(strings.Join(spec, ",")); err != nil {
			t.Errorf("Select(%v): %v", spec, err)
		}
	}
}

// TestSelectRefusesAStrandedFinalizer: the guard still holds for a loop whose finalizer another loop removes.
func TestSelectRefusesAStrandedFinalizer(t *testing.T) {
	saved := All
	t.Cleanup(func() { All = saved })
	All = []Loop{
		{Name: "adder", Group: GroupLifecycle, AddsFinalizers: []string{"example.com/f"}},
		{Name: "remover", Group: GroupLifecycle, RemovesFinalizers: []string{"example.com/f"}},
	}
	if _, err := Select("adder"); err == nil || !strings.Contains(err.Error(), "add remover to --loops") {
		t.Errorf(`Select("adder") = %v, want a refusal saying to add remover`, err)
	}
	if _, err := Select("adder,remover"); err != nil {
		t.Errorf(`Select("adder,remover"): %v`, err)
	}
}

// The catalog loops create versions with the cleanup finalizer only when a loop that removes it (install or upgrade)
// runs with them.
func TestVersionFinalizers(t *testing.T) {
	for spec, want := range map[string]int{"all": 1, "catalog,lifecycle": 1, "catalog": 0, "apptype,gc": 0, "apptype,install": 1, "apptype,upgrade": 1, "lifecycle": 1} {
		selected, err := Select(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := VersionFinalizers(selected); len(got) != want || want == 1 && got[0] != cleanup.Finalizer {
			t.Errorf("--loops %s: version finalizers %v, want %d", spec, got, want)
		}
	}
}
