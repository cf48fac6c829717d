package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestSelectLoops(t *testing.T) {
	saved := registry
	t.Cleanup(func() { registry = saved })
	registry = []loop{
		{name: "catalogsource", group: groupCatalog},
		{name: "apptype", group: groupCatalog},
		{name: "install", group: groupLifecycle},
		{name: "gc", group: groupLifecycle},
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
			got, err := selectLoops(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("selectLoops(%q) error = %v, want %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(names(got), tc.want) {
				t.Fatalf("selectLoops(%q) = %v, want %v", tc.spec, names(got), tc.want)
			}
		})
	}
}
