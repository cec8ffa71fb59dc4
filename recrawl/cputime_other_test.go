//go:build !unix

package recrawl

func cpuTime() int64 { return 0 }
