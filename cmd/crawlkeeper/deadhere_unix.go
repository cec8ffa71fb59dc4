//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// deadHere reports whether a lease owner ("host-pid", as every crawlkeeper
// process names itself) is a process of this machine that no longer
// runs. Anything else — another host, a name of another form, a live
// process — is not known to be dead.
func deadHere(owner string) bool {
	i := strings.LastIndexByte(owner, '-')
	if i <= 0 {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(owner[i+1:])
	if err != nil || pid <= 0 || owner[:i] != host || pid == os.Getpid() {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
