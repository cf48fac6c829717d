package image

import (
	"os"
	"strings"
	"testing"
)

// TestHostileImagesDocumented: every hostile row is listed under "Hostile inputs" in the top-level README.
func TestHostileImagesDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range hostileRows() {
		name := "TestHostileImagesRefused/catalog/" + strings.ReplaceAll(row.name, " ", "_")
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("README.md, Hostile inputs: no row names `%s`", name)
		}
	}
}
