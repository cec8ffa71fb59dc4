//go:build unix

package bench

import (
	"os"
	"syscall"
)

// peakRSS returns the peak resident memory of an exited process, in
// kilobytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
