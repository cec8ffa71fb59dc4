package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// ScanLease is the lease that lets one process at a time run passes over
// a shared store.
const ScanLease = "pipeline.scan"

// DefaultLeaseTTL is how long the scan lease lasts without renewal; it
// is renewed every third of that, so a process that dies hands the scan
// over within the TTL.
const DefaultLeaseTTL = 2 * time.Minute

func (e *Engine) leaseTTL() time.Duration {
	if e.LeaseTTL > 0 {
		return e.LeaseTTL
	}
	return DefaultLeaseTTL
}

// retryAfter is how long Run waits after a failed pass or a failed
// real-time receive before trying again.
const retryAfter = 30 * time.Second

// RunRealtime processes notifications from Queue with Workers goroutines
// until ctx ends (returning its error) or the queue is closed and drained
// (returning nil).
func (e *Engine) RunRealtime(ctx context.Context) error {
	if err := e.Init(ctx); err != nil {
		return err
	}
	if e.Queue == nil {
		return errors.New("pipeline: real time needs a queue")
	}
	var wg sync.WaitGroup
	for i := 0; i < e.workers(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := e.Queue.Receive(ctx)
				if errors.Is(err, crawlkeeper.ErrQueueClosed) || ctx.Err() != nil {
					return
				}
				if err != nil {
					e.realtime.errors.Add(1)
					e.logger().Warn("receive notifications", "err", err)
					select {
					case <-e.clock().After(time.Second):
					case <-ctx.Done():
						return
					}
					continue
				}
				e.handleNotification(ctx, n)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// handleNotification processes the records of one notification and
// acknowledges it. On a store error it does not acknowledge: a queue with
// acknowledgements delivers it again, and the next pass covers the rest.
func (e *Engine) handleNotification(ctx context.Context, n *crawlkeeper.Notification) {
	ids := make([]int64, len(n.Refs))
	for i, r := range n.Refs {
		ids[i] = r.ID
	}
	out, gone, committed, err := e.handleIDs(ctx, ids)
	e.realtime.processed.Add(out.Processed)
	e.realtime.skipped.Add(out.Skipped + gone)
	e.realtime.failed.Add(out.Failed)
	if o := e.Observer; o != nil {
		counted := out
		counted.Skipped += gone
		o.ObserveProcessed(PathRealtime, counted)
		if out.Processed > 0 && !committed.IsZero() {
			o.ObserveNotificationLag(e.clock().Now().Sub(committed))
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			e.realtime.errors.Add(1)
			e.logger().Warn("real time: process records", "err", err)
		}
		return
	}
	if err := n.Ack(ctx); err != nil && ctx.Err() == nil {
		e.logger().Warn("real time: acknowledge", "err", err)
	}
}

// Run is the continuous pipeline of a serve process: real-time processing
// when a Queue is set, and back-to-back passes, each paced over Period and
// begun no earlier than one Period after the previous one began, under a
// lease so that processes sharing a store take turns. It returns ctx's
// error when ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.Init(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	if e.Queue != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.RunRealtime(ctx); err != nil && ctx.Err() == nil {
				e.logger().Error("real time stopped", "err", err)
			}
		}()
	}
	defer wg.Wait()
	defer e.Save(context.WithoutCancel(ctx))
	owner := e.owner()
	for ctx.Err() == nil {
		ok, err := e.Store.AcquireLease(ctx, ScanLease, owner, e.leaseTTL(), e.leaseNow())
		if err != nil || !ok {
			if err != nil && ctx.Err() == nil {
				e.logger().Warn("scan lease", "err", err)
			}
			e.sleep(ctx, e.leaseTTL()/2)
			continue
		}
		e.scanWhileLeased(ctx, owner)
	}
	e.Store.ReleaseLease(context.WithoutCancel(ctx), ScanLease, owner)
	return ctx.Err()
}

// scanWhileLeased runs passes until ctx ends or the lease is lost.
func (e *Engine) scanWhileLeased(ctx context.Context, owner string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// Renew the lease during passes and the waits between them.
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.clock().After(e.leaseTTL() / 3):
			}
			ok, err := e.Store.AcquireLease(ctx, ScanLease, owner, e.leaseTTL(), e.leaseNow())
			if ctx.Err() != nil {
				return
			}
			if err != nil || !ok {
				// Cancelling stops the pass at its last checkpoint; Run
				// then waits to take the lease again.
				e.logger().Warn("scan lease lost", "err", err)
				cancel()
				return
			}
		}
	}()
	for ctx.Err() == nil {
		rep, err := e.runPass(ctx, true)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.logger().Error("pass failed; retrying", "err", err)
			e.sleep(ctx, retryAfter)
			continue
		}
		e.logger().Info("pass finished", "pass", rep.Pass, "processed", rep.Processed, "skipped", rep.Skipped, "failed", rep.Failed, "seconds", rep.DurationS)
		cp, err := LoadCheckpoint(ctx, e.Store)
		if err != nil || cp == nil {
			e.sleep(ctx, retryAfter)
			continue
		}
		e.sleep(ctx, cp.StartedAt.Add(e.period()).Sub(e.clock().Now()))
	}
}

// sleep waits d on the engine's clock or until ctx ends.
func (e *Engine) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-e.clock().After(d):
	}
}
