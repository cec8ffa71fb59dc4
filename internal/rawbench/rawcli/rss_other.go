//go:build !unix

package main

import "os"

// maxRSS is 0 where the system does not report a process's peak memory.
func maxRSS(*os.ProcessState) int64 { return 0 }
