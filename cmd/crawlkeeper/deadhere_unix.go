//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/crawlkeeper/crawlkeeper"
)

// deadHere reports whether a lease owner (named by
// crawlkeeper.ProcessOwner) is a process of this machine that no longer
// runs. Anything else — another host, a name of another form, this
// process, a live process, or a pid that another process took since — is
// not known to be dead.
func deadHere(owner string) bool {
	host, pid, ok := crawlkeeper.ParseProcessOwner(owner)
	if !ok || owner == crawlkeeper.ProcessOwner() {
		return false
	}
	if h, _ := os.Hostname(); host != h || pid == os.Getpid() {
		return false
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
