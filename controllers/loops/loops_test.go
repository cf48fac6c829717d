package loops

import (
	"reflect"
	"strings"
	"testing"
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
