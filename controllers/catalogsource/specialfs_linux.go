package catalogsource

import "syscall"

// specialFilesystems are the Linux file systems that hold kernel state, not files: by statfs magic number.
var specialFilesystems = map[int64]string{
	0x9fa0:     "proc",
	0x62656572: "sysfs",
	0x27e0eb:   "cgroup",
	0x63677270: "cgroup2",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0x1cd1:     "devpts",
	0xcafe4a11: "bpf",
	0x6165676c: "pstore",
	0x62656570: "configfs",
	0xde5e81e4: "efivarfs",
	0x65735543: "fusectl",
	0x42494e4d: "binfmt_misc",
	0x6e736673: "nsfs",
	0x19800202: "mqueue",
}

// specialFS says whether the directory dir is on a special file system (/proc, /sys, cgroups, ...), and names it.
func specialFS(dir string) (string, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	name, ok := specialFilesystems[int64(st.Type)] //nolint:unconvert // Type is int32 on some architectures
	return name, ok
}
