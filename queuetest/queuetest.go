// Package queuetest is the conformance suite of crawlkeeper.Queue. Every
// notification backend's tests call Run; a backend passes when every
// subtest passes unchanged.
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Opener prepares a new, empty queue for one subtest and returns a
// function that opens handles to it. Handles of one queue share its
// notifications the way several processes would; a backend that lives in
// one process may return the same queue each time. The suite closes every
// handle it opens.
type Opener func(tb testing.TB) func() crawlkeeper.Queue

// Run runs every conformance test against queues made by open.
func Run(t *testing.T, open Opener) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, open) })
	t.Run("SharedWork", func(t *testing.T) { testShared(t, open) })
	t.Run("ReceiveHonoursContext", func(t *testing.T) { testContext(t, open) })
	t.Run("PublishAccountsEveryRecord", func(t *testing.T) { testAccounting(t, open) })
	t.Run("Close", func(t *testing.T) { testClose(t, open) })
}

// wait bounds how long a subtest waits for notifications that must come:
// a failure, not a pace.
const wait = 30 * time.Second

func handle(t *testing.T, open func() crawlkeeper.Queue) crawlkeeper.Queue {
	t.Helper()
	q := open()
	t.Cleanup(func() { q.Close() })
	return q
}

func refs(from, n int) []crawlkeeper.RecordRef {
	out := make([]crawlkeeper.RecordRef, n)
	for i := range out {
		out[i] = crawlkeeper.RecordRef{ID: int64(from + i), Version: int64(1 + (from+i)%3)}
	}
	return out
}

// collect starts receivers on qs that stop once want records arrived or
// the wait ends, acknowledging each notification. The returned function
// waits for them and returns how often each ref came.
func collect(t *testing.T, qs []crawlkeeper.Queue, workers, want int) func() map[crawlkeeper.RecordRef]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	var mu sync.Mutex
	got := map[crawlkeeper.RecordRef]int{}
	total := 0
	var wg sync.WaitGroup
	for _, q := range qs {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(q crawlkeeper.Queue) {
				defer wg.Done()
				for {
					n, err := q.Receive(ctx)
					if err != nil {
						return
					}
					if err := n.Ack(ctx); err != nil {
						t.Errorf("ack: %v", err)
					}
					mu.Lock()
					for _, r := range n.Refs {
						got[r]++
					}
					total += len(n.Refs)
					done := total >= want
					mu.Unlock()
					if done {
						cancel()
					}
				}
			}(q)
		}
	}
	return func() map[crawlkeeper.RecordRef]int {
		wg.Wait()
		cancel()
		return got
	}
}

func testRoundTrip(t *testing.T, open Opener) {
	q := handle(t, open(t))
	const notes, per = 40, 5
	wait := collect(t, []crawlkeeper.Queue{q}, 1, notes*per)
	for i := 0; i < notes; i++ {
		q.Publish(refs(1+i*per, per))
	}
	got := wait()
	if len(got) != notes*per {
		t.Fatalf("received %d distinct refs, want %d", len(got), notes*per)
	}
	for _, r := range refs(1, notes*per) {
		if got[r] != 1 {
			t.Fatalf("ref %+v received %d times, want once (with its version)", r, got[r])
		}
	}
	// A consumer can see the last message before the publisher has its
	// acknowledgement and counts it: wait for the counters to settle.
	if s := settledStats(q, notes*per); s.Dropped != 0 || s.Published != notes*per {
		t.Fatalf("stats = %+v, want %d published and none dropped", s, notes*per)
	}
}

// settledStats returns q's counters once they account for want refs, or
// after ten seconds, whichever comes first.
func settledStats(q crawlkeeper.Queue, want int64) crawlkeeper.QueueStats {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := q.Stats()
		if s.Published+s.Dropped >= want || time.Now().After(deadline) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testShared(t *testing.T, open Opener) {
	opener := open(t)
	a, b := handle(t, opener), handle(t, opener)
	const notes, per = 100, 3
	wait := collect(t, []crawlkeeper.Queue{a, b}, 2, notes*per)
	for i := 0; i < notes; i++ {
		a.Publish(refs(1+i*per, per))
	}
	got := wait()
	for _, r := range refs(1, notes*per) {
		if got[r] != 1 {
			t.Fatalf("ref %+v received %d times by two consumers, want exactly once", r, got[r])
		}
	}
}

func testContext(t *testing.T, open Opener) {
	q := handle(t, open(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("receive with a cancelled context = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := q.Receive(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("receive on an empty queue = %v, want the context's deadline", err)
	}
}

// testAccounting publishes far more than any buffer without a receiver:
// Publish must return every time, and after Close every record is counted
// as either published or dropped.
func testAccounting(t *testing.T, open Opener) {
	q := open(t)()
	const notes, per = 5000, 2
	for i := 0; i < notes; i++ {
		q.Publish(refs(1+i*per, per))
	}
	q.Publish(nil) // nothing to say: neither published nor dropped
	if err := q.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := q.Stats()
	if s.Published+s.Dropped != notes*per {
		t.Fatalf("stats = %+v: %d records unaccounted for", s, notes*per-s.Published-s.Dropped)
	}
	q.Publish(refs(1, 1))
	if s2 := q.Stats(); s2.Dropped != s.Dropped+1 || s2.Published != s.Published {
		t.Fatalf("publish after close: stats %+v -> %+v, want one more dropped", s, s2)
	}
}

func testClose(t *testing.T, open Opener) {
	q := open(t)()
	q.Publish(refs(1, 2))
	// Let the notification reach the backend before closing, so the test
	// does not depend on how Close treats a publish in flight.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	n, err := q.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if err := n.Ack(ctx); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for i := 0; ; i++ {
		_, err := q.Receive(ctx)
		if errors.Is(err, crawlkeeper.ErrQueueClosed) {
			break
		}
		if err != nil || i > 10 {
			t.Fatalf("receive after close = %v, want ErrQueueClosed", fmt.Sprint(err))
		}
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}
