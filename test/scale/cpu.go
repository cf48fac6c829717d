package scale

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: clock ticks, 100 per second on Linux (USER_HZ).
const userHZ = 100

// CPUTimes are the user and system CPU times, by process name, of this process ("harness": the test binary with its
// informers and kubelet) and of its children: kube-apiserver, etcd, kube-controller-manager and ALM.
type CPUTimes map[string]time.Duration

// readCPUTimes reads the CPU times of this process and its children from /proc; a process that cannot be read is
// left out.
func readCPUTimes() CPUTimes {
	out := CPUTimes{}
	self := os.Getpid()
	if name, _, t, ok := procStat(filepath.Join("/proc", strconv.Itoa(self), "stat")); ok && name != "" {
		out["harness"] += t
	}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		if name, ppid, t, ok := procStat(p); ok && ppid == self {
			out[name] += t
		}
	}
	return out
}

// procStat parses /proc/<pid>/stat: the command name, the parent's pid and utime+stime.
func procStat(path string) (string, int, time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	fields := strings.Fields(s[end+1:]) // from field 3 (state) on
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, _ := strconv.Atoi(fields[1])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return s[open+1 : end], ppid, time.Duration(utime+stime) * time.Second / userHZ, true
}

// Since is the CPU time each process used since before.
func (c CPUTimes) Since(before CPUTimes) CPUTimes {
	out := CPUTimes{}
	for name, t := range c {
		out[name] = t - before[name]
	}
	return out
}

// Total is the CPU time of all processes.
func (c CPUTimes) Total() time.Duration {
	var sum time.Duration
	for _, t := range c {
		sum += t
	}
	return sum
}
