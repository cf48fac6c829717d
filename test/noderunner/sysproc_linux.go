package noderunner

import "syscall"

// sysProcAttr puts a container process in its own process group (so its children are signalled with it) and has
// the kernel kill it if the runner dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
