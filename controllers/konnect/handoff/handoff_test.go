package handoff

import (
	"testing"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		ov   map[string]any
		want Step
	}{
		{"installing, nothing asked yet: wait", map[string]any{"status": map[string]any{"phase": "Installing"}}, StepWait},
		{"no status yet: wait", map[string]any{}, StepWait},
		{"requested: work", map[string]any{"status": map[string]any{"phase": "Succeeded", "handoff": map[string]any{"from": "v1"}}}, StepWork},
		{"completed: done", map[string]any{"status": map[string]any{"handoff": map[string]any{"from": "v1", "completed": true}}}, StepDone},
		{"failed: done", map[string]any{"status": map[string]any{"phase": "Failed", "handoff": map[string]any{"from": "v1", "failed": "x"}}}, StepDone},
		{"succeeded without a request (a first install): done", map[string]any{"status": map[string]any{"phase": "Succeeded"}}, StepDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.ov); got != tc.want {
				t.Errorf("Decide = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTargetFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := TargetFromEnv(env(map[string]string{EnvName: "op.v2", EnvNamespace: "ops", "POD_NAMESPACE": "x"})); got == nil || *got != (Target{"ops", "op.v2"}) {
		t.Errorf("target = %v", got)
	}
	if got := TargetFromEnv(env(map[string]string{EnvName: "op.v2", "POD_NAMESPACE": "x"})); got == nil || got.Namespace != "x" {
		t.Errorf("target without %s = %v, want the pod's namespace", EnvNamespace, got)
	}
	if got := TargetFromEnv(env(map[string]string{"POD_NAMESPACE": "x"})); got != nil {
		t.Errorf("target without %s = %v, want none", EnvName, got)
	}
}
