package main

import "testing"

// A container's memory limit becomes Go's soft limit (a share of it); no limit, or an unreadable one, sets none.
func TestGoMemLimit(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int64
	}{
		{"268435456\n", 214748364},        // cgroup v2: 256 MiB
		{"max\n", 0},                      // cgroup v2: no limit
		{"9223372036854771712\n", 0},      // cgroup v1: no limit
		{"", 0},                           // unreadable
		{"0\n", 0},                        // nonsense
		{"104857600", 104857600 * 8 / 10}, // v1 and v2 without a newline
	} {
		if got := goMemLimit(tc.content); got != tc.want {
			t.Errorf("goMemLimit(%q) = %d, want %d", tc.content, got, tc.want)
		}
	}
}
