package crawlkeeper

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ArchiverLease is the lease that lets one process at a time run archive
// passes over a store that several processes share.
const ArchiverLease = "archiver"

// ErrLeaseLost is returned by LeaseHolder.Run when the lease could not be
// renewed while the work ran: the work was stopped so that two processes
// never run it at once.
var ErrLeaseLost = errors.New("lease lost")

// Leaser is the part of StateStore that coordinates processes.
type Leaser interface {
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error)
	ReleaseLease(ctx context.Context, name, owner string) error
}

// LeaseHolder runs work under a lease and keeps the lease for as long as
// the work runs, however long that is: it renews the lease every TTL/4,
// each renewal given at most TTL/4 to answer, and stops the work (by
// cancelling its context) when the lease turns out to be held by another
// owner, or when renewals have failed for TTL/2 since the last one that
// worked — long before the lease can expire, even when a renewal hangs.
type LeaseHolder struct {
	Store Leaser
	Name  string
	Owner string
	TTL   time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// After waits on the clock. Defaults to time.After.
	After func(time.Duration) <-chan time.Time
}

func (h *LeaseHolder) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *LeaseHolder) after(d time.Duration) <-chan time.Time {
	if h.After != nil {
		return h.After(d)
	}
	return time.After(d)
}

// Run takes the lease and runs work with it. It returns held=false and no
// error when another owner holds the lease (work does not run), an error
// when the lease could not be read or taken, and otherwise work's error —
// wrapped in ErrLeaseLost when the lease was lost while work ran. The lease
// is released when work returns.
func (h *LeaseHolder) Run(ctx context.Context, work func(ctx context.Context) error) (held bool, err error) {
	if h.TTL <= 0 {
		return false, Errorf(EINVALID, "lease %s: a lease needs a positive time to live", h.Name)
	}
	ok, err := h.Store.AcquireLease(ctx, h.Name, h.Owner, h.TTL, h.now())
	if err != nil {
		return false, fmt.Errorf("take the %s lease: %w", h.Name, err)
	}
	if !ok {
		return false, nil
	}
	defer h.Store.ReleaseLease(context.WithoutCancel(ctx), h.Name, h.Owner)
	workCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		lastOK := h.now()
		failures := 0
		for {
			select {
			case <-workCtx.Done():
				return
			case <-h.after(h.TTL / 4):
			}
			rctx, rcancel := context.WithTimeout(workCtx, h.TTL/4)
			ok, err := h.Store.AcquireLease(rctx, h.Name, h.Owner, h.TTL, h.now())
			rcancel()
			if workCtx.Err() != nil {
				return
			}
			switch {
			case err == nil && ok:
				lastOK, failures = h.now(), 0
				continue
			case err == nil:
				cancel(fmt.Errorf("%w: the %s lease is held by another process", ErrLeaseLost, h.Name))
				return
			}
			// Two failed renewals in a row span TTL/2 on the renewal
			// clock; the elapsed time counts renewals that hung too.
			if failures++; failures >= 2 || h.now().Sub(lastOK) >= h.TTL/2 {
				cancel(fmt.Errorf("%w: the %s lease could not be renewed since %s: %v", ErrLeaseLost, h.Name, lastOK.Format(time.RFC3339), err))
				return
			}
		}
	}()
	err = work(workCtx)
	cancel(nil)
	<-renewed
	if cause := context.Cause(workCtx); errors.Is(cause, ErrLeaseLost) {
		return true, cause
	}
	return true, err
}
