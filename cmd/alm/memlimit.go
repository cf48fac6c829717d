package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit that ALM's Go heap, stacks and runtime may use
// before the collector works harder to stay under it (GOMEMLIMIT): the rest is left for the executable's pages,
// which count against the limit but are not Go's to free.
const memoryLimitShare = 0.8

// cgroupMemoryFiles hold the container's memory limit: cgroup v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryLimit sets Go's soft memory limit to memoryLimitShare of the container's memory limit, unless
// GOMEMLIMIT is set or no limit is (a process outside a container, or a container without a limit). It returns
// the limit it set (0 if none) and the file it was read from. This is a complement, not what keeps ALM small: it
// makes the collector run sooner as the heap nears the limit, instead of letting garbage grow to GOGC's goal and
// the container be killed; what ALM holds is cut elsewhere (loops.CacheOptions, lists without copies).
func setMemoryLimit() (int64, string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, ""
	}
	for _, path := range cgroupMemoryFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if limit := goMemLimit(string(data)); limit > 0 {
			debug.SetMemoryLimit(limit)
			return limit, path
		}
		return 0, ""
	}
	return 0, ""
}

// goMemLimit is the Go memory limit for a cgroup memory limit file's content: memoryLimitShare of it, or 0 when the
// file says there is no limit ("max" in cgroup v2; v1 reports a huge number, about the largest page-aligned int64).
func goMemLimit(content string) int64 {
	s := strings.TrimSpace(content)
	limit, err := strconv.ParseInt(s, 10, 64)
	if err != nil || limit <= 0 || limit >= 1<<62 {
		return 0
	}
	return int64(float64(limit) * memoryLimitShare)
}
