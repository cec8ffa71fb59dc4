//go:build !unix

package bench

import "os"

// peakRSS is 0 where the system does not report a process's peak memory.
func peakRSS(*os.ProcessState) int64 { return 0 }
