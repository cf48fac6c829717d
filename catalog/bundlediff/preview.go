package bundlediff

import (
	"fmt"
	"io"
	"strings"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// Preview is the result as an AppType's status shows it: each list bounded to almv1alpha1.MaxPreviewItems
// (refused changes first, so none is hidden), the others counted in More, and the summary line of all of them.
func (r Result) Preview(from, to string) *almv1alpha1.UpgradePreview {
	p := &almv1alpha1.UpgradePreview{From: from, To: to, Summary: r.Summary()}
	bound := func(l []almv1alpha1.PreviewChange) []almv1alpha1.PreviewChange {
		if len(l) <= almv1alpha1.MaxPreviewItems {
			return l
		}
		p.More += int32(len(l) - almv1alpha1.MaxPreviewItems)
		return l[:almv1alpha1.MaxPreviewItems]
	}
	p.Objects, p.RBACRules, p.CRDs, p.Webhooks = bound(r.Objects), bound(r.RBACRules), bound(r.CRDs), bound(r.Webhooks)
	return p
}

// Refused counts the changes ALM would refuse (without their opt-in annotations) or that are unsafe.
func (r Result) Refused() int {
	return refused(r.Objects) + refused(r.RBACRules) + refused(r.CRDs) + refused(r.Webhooks)
}

// Summary is one line: "~1 Deployment (image), +2 RBAC rules, ~1 CRD, 0 refused". Counts are of every change,
// not only those a bounded preview lists.
func (r Result) Summary() string {
	var parts []string
	add := func(n int, format string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(format, n, plural(n)))
		}
	}
	changedDeployments, changedOthers := 0, 0
	for _, c := range r.Objects {
		if c.Op == almv1alpha1.ChangeChanged && c.Kind == "Deployment" {
			changedDeployments++
		} else if c.Op == almv1alpha1.ChangeChanged {
			changedOthers++
		}
	}
	add(count(r.Objects, almv1alpha1.ChangeAdded), "+%d object%s")
	if changedDeployments > 0 {
		parts = append(parts, fmt.Sprintf("~%d Deployment%s (%s)", changedDeployments, plural(changedDeployments), strings.Join(r.DeploymentAspects, ", ")))
	}
	add(changedOthers, "~%d object%s")
	add(count(r.Objects, almv1alpha1.ChangeRemoved), "-%d object%s")
	add(count(r.RBACRules, almv1alpha1.ChangeAdded), "+%d RBAC rule%s")
	add(count(r.RBACRules, almv1alpha1.ChangeRemoved), "-%d RBAC rule%s")
	add(count(r.CRDs, almv1alpha1.ChangeAdded), "+%d CRD%s")
	add(count(r.CRDs, almv1alpha1.ChangeChanged), "~%d CRD%s")
	add(count(r.CRDs, almv1alpha1.ChangeRemoved), "-%d CRD%s")
	add(count(r.Webhooks, almv1alpha1.ChangeAdded), "+%d webhook%s")
	add(count(r.Webhooks, almv1alpha1.ChangeChanged), "~%d webhook%s")
	add(count(r.Webhooks, almv1alpha1.ChangeRemoved), "-%d webhook%s")
	if len(parts) == 0 {
		parts = append(parts, "no changes")
	}
	return strings.Join(append(parts, fmt.Sprintf("%d refused", r.Refused())), ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// symbols mark a change's op in text output.
var symbols = map[almv1alpha1.ChangeOp]string{almv1alpha1.ChangeAdded: "+", almv1alpha1.ChangeChanged: "~", almv1alpha1.ChangeRemoved: "-"}

// Write prints a preview for a person: the summary, then each list, one change a line, refusals indented under
// the change they are about.
func Write(w io.Writer, title string, p *almv1alpha1.UpgradePreview) {
	fmt.Fprintf(w, "%s %s -> %s: %s\n", title, p.From, p.To, p.Summary)
	if p.Error != "" {
		fmt.Fprintf(w, "preview unavailable: %s\n", p.Error)
		return
	}
	section := func(name string, l []almv1alpha1.PreviewChange) {
		if len(l) == 0 {
			fmt.Fprintf(w, "%s: none\n", name)
			return
		}
		fmt.Fprintf(w, "%s:\n", name)
		for _, c := range l {
			line := fmt.Sprintf("  %s %s %s", symbols[c.Op], c.Kind, c.Name)
			if c.Scope != "" {
				line += " (" + strings.ToLower(c.Scope) + ")"
			}
			if c.Detail != "" {
				line += ": " + c.Detail
			}
			fmt.Fprintln(w, line)
			if c.Refused != "" {
				fmt.Fprintf(w, "      REFUSED: %s\n", c.Refused)
			}
		}
	}
	section("objects", p.Objects)
	section("RBAC rules", p.RBACRules)
	section("CRDs", p.CRDs)
	section("webhooks", p.Webhooks)
	if p.More > 0 {
		fmt.Fprintf(w, "and %d more (the summary counts them)\n", p.More)
	}
}
