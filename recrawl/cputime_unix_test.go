//go:build unix

package recrawl

import "syscall"

// cpuTime is the process's user and system time in nanoseconds: on a
// shared machine it measures the work, where the wall clock measures the
// neighbours.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
