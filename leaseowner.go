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

// ProcessOwner is the name this process takes leases under:
// "host-pid-token", where token is random and drawn once per process. The
// host and pid say where the holder runs (and let a process of the same
// machine see that it died); the token keeps two processes apart that
// share both, such as containers given one hostname, each running as pid 1.
func ProcessOwner() string {
	ownerOnce.Do(func() {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "unknown"
		}
		var b [4]byte
		rand.Read(b[:])
		processOwner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	})
	return processOwner
}

var (
	ownerOnce    sync.Once
	processOwner string
)

// ParseProcessOwner splits an owner name made by ProcessOwner (or the
// older "host-pid") into its host and pid; ok is false for other names.
func ParseProcessOwner(owner string) (host string, pid int, ok bool) {
	rest := owner
	if i := strings.LastIndexByte(rest, '-'); i > 0 && len(rest)-i-1 == 8 {
		if _, err := hex.DecodeString(rest[i+1:]); err == nil {
			rest = rest[:i]
		}
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[i+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:i], pid, true
}
