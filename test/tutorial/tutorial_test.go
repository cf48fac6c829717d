package tutorial

import (
	"strings"
	"testing"
)

// TestExtract: only "sh tutorial" blocks, in order; a here-document and continued lines stay one command; comments
// and other blocks are left out.
func TestExtract(t *testing.T) {
	text := "# T\n\n```sh\nmake run\n```\n\n```sh tutorial\nexport A=1   # env\n# a comment\nkubectl get nodes\n" +
		"kubectl apply -f - <<'YAML'\nkind: AppType\n  spec: {}\nYAML\nalmctl publish x \\\n  --catalog y\n```\n\ntext\n\n" +
		"```sh tutorial\nkubectl delete ns t\n```\n"
	got, err := Extract(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{{8, "export A=1   # env"}, {10, "kubectl get nodes"},
		{11, "kubectl apply -f - <<'YAML'\nkind: AppType\n  spec: {}\nYAML"}, {15, "almctl publish x \\\n  --catalog y"},
		{22, "kubectl delete ns t"}}
	if len(got) != len(want) {
		t.Fatalf("got %d commands %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := Extract("```sh tutorial\nkubectl get ns\n"); err == nil {
		t.Error("an unclosed block: want an error")
	}
}

// TestTutorialCommands: the tutorial has its three steps' commands, each of them runnable by sh.
func TestTutorialCommands(t *testing.T) {
	cmds, err := Commands("../..")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, c := range cmds {
		all = append(all, c.Text)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"almctl publish bundles/konnect-operator/1.0.0", "kind: AppType", "almctl publish bundles/konnect-operator/1.1.0",
		"operatorversion/konnect-operator.v1.0.0 --for=delete"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the tutorial's commands do not include %q", want)
		}
	}
}
