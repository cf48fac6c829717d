package crd

import "testing"

// Two packages of a catalog may own one CRD: the package whose label the CRD carries provides it.
func TestProvidingPackage(t *testing.T) {
	cases := []struct {
		label  string
		owners []string
		want   string
	}{
		{"velero", []string{"oadp", "velero"}, "velero"},
		{"oadp", []string{"oadp", "velero"}, "oadp"},
		{"gone", []string{"oadp", "velero"}, "oadp"},
		{"velero", nil, "velero"},
	}
	for _, c := range cases {
		if got := providingPackage(c.label, c.owners); got != c.want {
			t.Errorf("providingPackage(%q, %v) = %q, want %q", c.label, c.owners, got, c.want)
		}
	}
}
