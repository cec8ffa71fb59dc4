//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSS returns an exited process's peak resident memory in kilobytes.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
