package bodydiff

import "testing"

func TestDrifted(t *testing.T) {
	desired := map[string]any{"host": "example.com", "port": float64(80), "tags": []any{"a", "k8s-uid:1"}}
	for _, tc := range []struct {
		name   string
		actual map[string]any
		keys   []string
		want   bool
	}{
		{"same, with server defaults", map[string]any{"id": "x", "host": "example.com", "port": 80, "retries": 5, "tags": []any{"a", "k8s-uid:1"}}, nil, false},
		{"tags in another order", map[string]any{"host": "example.com", "port": 80, "tags": []any{"k8s-uid:1", "a"}}, nil, false},
		{"host edited in the UI", map[string]any{"host": "evil.com", "port": 80, "tags": []any{"a", "k8s-uid:1"}}, nil, true},
		{"port edited", map[string]any{"host": "example.com", "port": 8080, "tags": []any{"a", "k8s-uid:1"}}, nil, true},
		{"tag removed", map[string]any{"host": "example.com", "port": 80, "tags": []any{"a"}}, nil, true},
		{"field missing", map[string]any{"port": 80, "tags": []any{"a", "k8s-uid:1"}}, nil, true},
		{"difference outside the compared keys", map[string]any{"host": "evil.com", "port": 80}, []string{"port"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Drifted(desired, tc.actual, tc.keys); got != tc.want {
				t.Errorf("Drifted = %v, want %v", got, tc.want)
			}
		})
	}
	labels := map[string]any{"name": "cp", "labels": map[string]any{"app": "x", "k8s-uid": "1"}}
	if !Drifted(labels, map[string]any{"name": "cp", "labels": map[string]any{"app": "x", "k8s-uid": "1", "extra": "y"}}, nil) {
		t.Error("a label added out of band is drift")
	}
	if Drifted(labels, map[string]any{"name": "cp", "labels": map[string]any{"app": "x", "k8s-uid": "1", "konnect-managed": "y"}}, nil) {
		t.Error("a label only Konnect can set is not drift")
	}
	if !Drifted(labels, map[string]any{"name": "cp", "labels": map[string]any{"k8s-uid": "1"}}, nil) {
		t.Error("a removed label is drift")
	}
	plugin := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 5, "redis": map[string]any{"port": 6379}}}
	withDefaults := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 5, "policy": "local", "redis": map[string]any{"port": 6379, "timeout": 2000}}}
	if Drifted(plugin, withDefaults, nil) {
		t.Error("a plugin's configuration with Konnect's defaults filled in is not drift")
	}
	edited := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 500, "policy": "local", "redis": map[string]any{"port": 6379}}}
	if !Drifted(plugin, edited, nil) {
		t.Error("a configuration value edited out of band is drift")
	}
	nested := map[string]any{"name": "rate-limiting", "config": map[string]any{"minute": 5, "redis": map[string]any{"port": 1}}}
	if !Drifted(plugin, nested, nil) {
		t.Error("a nested configuration value edited out of band is drift")
	}
}
