package crawlkeeper

import (
	"context"
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
