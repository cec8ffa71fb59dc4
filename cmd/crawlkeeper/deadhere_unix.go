//go:build unix

package main

import (
	"syscall"

	"github.com/crawlkeeper/crawlkeeper"
)

// deadHere reports whether a lease owner (named by
// crawlkeeper.ProcessOwner) is known to have died: a process of this
// host, PID namespace and boot that no longer runs
// (crawlkeeper.LeaseOwnerGone decides; kill(pid, 0) answers whether a pid
// runs). Anything else is not known to be dead, and its lease is waited
// out.
func deadHere(owner string) bool {
	return crawlkeeper.LeaseOwnerGone(owner, crawlkeeper.ThisProcess(), func(pid int) bool {
		// EPERM: the pid runs, as another user's process.
		return syscall.Kill(pid, 0) != syscall.ESRCH
	})
}
