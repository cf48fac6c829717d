package image

import (
	"strings"
	"testing"

	"github.com/almproject/alm/test/docscheck"
)

// TestHostileImagesDocumented: every hostile row is listed under the hostile-inputs reference (docs/reference/hostile-inputs.md), and every
// TestHostileImagesRefused case a row there names exists.
func TestHostileImagesDocumented(t *testing.T) {
	rows, err := docscheck.HostileRows("../../" + docscheck.HostilePage)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range hostileRows() {
		names = append(names, strings.ReplaceAll(row.name, " ", "_"))
	}
	for _, p := range docscheck.CrossCheck(rows, "TestHostileImagesRefused", "catalog/", names) {
		t.Error(p)
	}
}
