//go:build !linux

package noderunner

import "syscall"

// sysProcAttr puts a container process in its own process group so its children are signalled with it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
