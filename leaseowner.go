package crawlkeeper

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LeaseReader tells who holds a lease, so that a process that cannot take
// one can name the holder and say when it expires. Every store implements
// it next to its leases.
type LeaseReader interface {
	// LeaseOwner returns the owner of the named lease and when it expires;
	// owner is "" when nobody holds it at now (never taken, released, or
	// expired).
	LeaseOwner(ctx context.Context, name string, now time.Time) (owner string, expires time.Time, err error)
}

// LeaseOwnerID is a lease owner's name read back: where the holder runs
// and which process it is.
type LeaseOwnerID struct {
	// Host is the host name the process saw.
	Host string
	// PID is its process id, in its own PID namespace.
	PID int
	// Token is drawn at random once per process, so two processes that
	// share host and pid (containers given one hostname, each running as
	// pid 1) have different names. Empty in the oldest form, host-pid.
	Token string
	// PIDNS is the inode of the process's PID namespace
	// (/proc/self/ns/pid); 0 when it was not known.
	PIDNS uint64
	// Boot is the kernel's boot id (/proc/sys/kernel/random/boot_id);
	// empty when it was not known.
	Boot string
}

// String is the owner name: "host-pid-token", followed by
// "/pidns:INODE/boot:UUID" when both are known.
func (o LeaseOwnerID) String() string {
	s := fmt.Sprintf("%s-%d", o.Host, o.PID)
	if o.Token != "" {
		s += "-" + o.Token
	}
	if o.PIDNS != 0 && o.Boot != "" {
		s += fmt.Sprintf("/pidns:%d/boot:%s", o.PIDNS, o.Boot)
	}
	return s
}

// ThisProcess is the identity this process takes leases under (ProcessOwner
// is its name).
func ThisProcess() LeaseOwnerID {
	ownerOnce.Do(func() {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "unknown"
		}
		var b [4]byte
		rand.Read(b[:])
		thisProcess = LeaseOwnerID{Host: host, PID: os.Getpid(), Token: hex.EncodeToString(b[:]),
			PIDNS: readPIDNamespace(), Boot: readBootID()}
	})
	return thisProcess
}

// ProcessOwner is the name this process takes leases under:
// "host-pid-token/pidns:INODE/boot:UUID". The host and pid say where the
// holder runs; the token keeps two processes apart that share both; the
// PID namespace and boot say where the pid means something, so that a
// process of the same namespace and boot can see that the holder died
// (LeaseOwnerGone). Where the namespace or the boot cannot be read (no
// /proc, another operating system) the name ends after the token, and
// nobody judges the holder dead before its lease expires.
func ProcessOwner() string {
	ownerNameOnce.Do(func() { processOwner = ThisProcess().String() })
	return processOwner
}

var (
	ownerOnce     sync.Once
	thisProcess   LeaseOwnerID
	ownerNameOnce sync.Once
	processOwner  string
)

// readPIDNamespace returns the inode of this process's PID namespace, read
// from the link /proc/self/ns/pid ("pid:[4026531836]"), or 0. /proc/self
// is this process whichever namespace the proc file system was mounted
// from; where this process is not visible in it, the link cannot be read
// and the namespace stays unknown.
func readPIDNamespace() uint64 {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	inner, ok := strings.CutPrefix(link, "pid:[")
	if !ok {
		return 0
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(inner, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// readBootID returns the kernel's boot id, a UUID drawn at every boot, or
// "". Containers share their host's kernel, and so its boot id.
func readBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if !isBootID(id) {
		return ""
	}
	return id
}

// isBootID reports whether s is a UUID as the kernel writes it: 36
// characters, lower-case hex digits and dashes.
func isBootID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// ParseLeaseOwner reads an owner name made by ProcessOwner, in this form or
// the older ones ("host-pid-token", "host-pid"); ok is false for other
// names (an owner a test or another tool chose).
func ParseLeaseOwner(owner string) (o LeaseOwnerID, ok bool) {
	rest := owner
	if i := strings.LastIndex(rest, "/boot:"); i > 0 {
		j := strings.LastIndex(rest[:i], "/pidns:")
		if j <= 0 {
			return LeaseOwnerID{}, false
		}
		ns, err := strconv.ParseUint(rest[j+len("/pidns:"):i], 10, 64)
		boot := rest[i+len("/boot:"):]
		if err != nil || ns == 0 || !isBootID(boot) {
			return LeaseOwnerID{}, false
		}
		o.PIDNS, o.Boot = ns, boot
		rest = rest[:j]
	}
	if i := strings.LastIndexByte(rest, '-'); i > 0 && len(rest)-i-1 == 8 {
		if _, err := hex.DecodeString(rest[i+1:]); err == nil {
			o.Token = rest[i+1:]
			rest = rest[:i]
		}
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return LeaseOwnerID{}, false
	}
	pid, err := strconv.Atoi(rest[i+1:])
	if err != nil || pid <= 0 {
		return LeaseOwnerID{}, false
	}
	o.Host, o.PID = rest[:i], pid
	return o, true
}

// ParseProcessOwner splits an owner name made by ProcessOwner (or an
// older form) into its host and pid; ok is false for other names.
func ParseProcessOwner(owner string) (host string, pid int, ok bool) {
	o, ok := ParseLeaseOwner(owner)
	return o.Host, o.PID, ok
}

// LeaseOwnerGone reports whether the lease owner named owner is known to
// be dead, seen from the process here, so that its lease may be taken
// before it expires. exists asks whether a pid runs in here's PID
// namespace (kill(pid, 0) on Unix).
//
// A pid means something only inside its PID namespace, and only until
// the machine reboots: a container that shares the host name (host
// networking, a fixed hostname) sees another PID table, where the holder's
// pid is missing or is another process. So the answer is yes only when the
// owner names the same host, PID namespace and boot as here, is not this
// process, and its pid either is here's own (the owner was an earlier
// process with this pid, and pids are unique within a namespace) or runs
// no process at all. A pid that some process holds again is not known to
// be dead; neither is an owner whose name does not say its namespace and
// boot (the older forms, or a process that could not read them): those
// leases are taken only after they expire.
func LeaseOwnerGone(owner string, here LeaseOwnerID, exists func(pid int) bool) bool {
	o, ok := ParseLeaseOwner(owner)
	if !ok || o.Token == "" || o.PIDNS == 0 || o.Boot == "" || here.PIDNS == 0 || here.Boot == "" {
		return false
	}
	if o == here || o.Host != here.Host || o.PIDNS != here.PIDNS || o.Boot != here.Boot {
		return false
	}
	if o.PID == here.PID {
		return true
	}
	return !exists(o.PID)
}
