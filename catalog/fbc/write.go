package fbc

import (
	"fmt"
	"io"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// Write writes a DeclarativeConfig as JSON (format "json") or YAML ("yaml") with the operator-registry codec.
func Write(cfg *declcfg.DeclarativeConfig, format string, w io.Writer) error {
	switch strings.ToLower(format) {
	case "json", "":
		return declcfg.WriteJSON(*cfg, w)
	case "yaml", "yml":
		return declcfg.WriteYAML(*cfg, w)
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", format)
}
