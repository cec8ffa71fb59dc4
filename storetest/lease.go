package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// LeaseBackend is a store with leases that tells who holds them.
type LeaseBackend interface {
	crawlkeeper.Leaser
	crawlkeeper.LeaseReader
}

// RunLeaseReader runs the conformance tests of crawlkeeper.LeaseReader: the
// owner and expiry of a held lease, and no owner once it is released or
// expired.
func RunLeaseReader(t *testing.T, open func(tb testing.TB) LeaseBackend) {
	s := open(t)
	if c, ok := s.(interface{ Close() error }); ok {
		t.Cleanup(func() { c.Close() })
	}
	ctx := context.Background()
	owner := func(name string, at time.Time) (string, time.Time) {
		t.Helper()
		o, until, err := s.LeaseOwner(ctx, name, at)
		ok(t, err)
		return o, until
	}
	if o, _ := owner("pipeline.scan", T0); o != "" {
		t.Fatalf("owner of a lease never taken = %q", o)
	}
	if held, err := s.AcquireLease(ctx, "pipeline.scan", "host-42", time.Minute, T0); err != nil || !held {
		t.Fatalf("acquire = %v %v", held, err)
	}
	if o, until := owner("pipeline.scan", T0.Add(time.Second)); o != "host-42" || !until.Equal(T0.Add(time.Minute)) {
		t.Fatalf("owner = %q until %v, want host-42 until %v", o, until, T0.Add(time.Minute))
	}
	if o, _ := owner("archiver", T0); o != "" {
		t.Fatalf("another lease's owner = %q", o)
	}
	if o, _ := owner("pipeline.scan", T0.Add(time.Minute)); o != "" {
		t.Fatalf("owner of an expired lease = %q", o)
	}
	ok(t, s.ReleaseLease(ctx, "pipeline.scan", "host-42"))
	if o, _ := owner("pipeline.scan", T0.Add(time.Second)); o != "" {
		t.Fatalf("owner of a released lease = %q", o)
	}
}
