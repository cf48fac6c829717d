package index

import (
	"fmt"
	"io"
	"strings"
)

// WriteMermaid writes the upgrade graph of a package as a Mermaid flowchart, one subgraph per catalog and channel.
// Edges point from the version upgraded from to the version upgraded to: replaces is a solid arrow, skips a dotted
// arrow, skipRange a thick arrow labelled with the range. It returns ErrPackageNotFound for an unknown package.
func (ix *Index) WriteMermaid(w io.Writer, pkg string) error {
	pkgs := ix.packages[pkg]
	if len(pkgs) == 0 {
		return fmt.Errorf("%w: %q", ErrPackageNotFound, pkg)
	}
	var sb strings.Builder
	sb.WriteString("flowchart LR\n")
	sb.WriteString("  %% replaces: -->   skips: -.->   skipRange: ==>\n")
	for ci, p := range pkgs {
		for chi, ch := range p.Channels {
			prefix := fmt.Sprintf("c%d_%d_", ci, chi)
			title := ch.Name
			if len(pkgs) > 1 {
				title = p.Catalog + " / " + ch.Name
			}
			if ch.Name == p.DefaultChannel {
				title += " (default)"
			}
			fmt.Fprintf(&sb, "  subgraph %s[%q]\n", strings.TrimSuffix(prefix, "_"), title)
			id := map[string]string{}
			for i, e := range ch.Entries {
				id[e.Bundle.Name] = fmt.Sprintf("%sn%d", prefix, i)
				fmt.Fprintf(&sb, "    %s[%q]\n", id[e.Bundle.Name], e.Bundle.Name+" "+e.Bundle.Version.String())
			}
			// Oldest first reads left to right.
			for i := len(ch.Entries) - 1; i >= 0; i-- {
				e := ch.Entries[i]
				to := id[e.Bundle.Name]
				if from, ok := id[e.Replaces]; ok {
					fmt.Fprintf(&sb, "    %s -- replaces --> %s\n", from, to)
				}
				for _, s := range e.Skips {
					if from, ok := id[s]; ok {
						fmt.Fprintf(&sb, "    %s -. skips .-> %s\n", from, to)
					}
				}
				if up := e.upgrade(); up.SkipRange != nil {
					for j := len(ch.Entries) - 1; j >= 0; j-- {
						o := ch.Entries[j]
						if up.EdgeFrom("", o.Bundle.Version) == EdgeSkipRange {
							fmt.Fprintf(&sb, "    %s ==>|\"skipRange %s\"| %s\n", id[o.Bundle.Name], e.SkipRange, to)
						}
					}
				}
			}
			sb.WriteString("  end\n")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
