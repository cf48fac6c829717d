package image

import (
	"strings"
	"testing"

	"github.com/almproject/alm/test/readmecheck"
)

// TestHostileImagesDocumented: every hostile row is listed under "Hostile inputs" in the top-level README, and every
// TestHostileImagesRefused case a README row names exists.
func TestHostileImagesDocumented(t *testing.T) {
	rows, err := readmecheck.HostileRows("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range hostileRows() {
		names = append(names, strings.ReplaceAll(row.name, " ", "_"))
	}
	for _, p := range readmecheck.CrossCheck(rows, "TestHostileImagesRefused", "catalog/", names) {
		t.Error(p)
	}
}
