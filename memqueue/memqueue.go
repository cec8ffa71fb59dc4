// Package memqueue is the in-process notification queue, the default when
// no queue URL is configured: a bounded channel between the ingest path
// and the pipeline's real-time workers of the same process.
//
// It never blocks an ingest: when the channel is full the notification is
// dropped and counted, and the records wait for the next rescan pass. It
// has no acknowledgements; a notification received by a worker that then
// fails is not delivered again (the next pass covers it).
package memqueue

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/crawlkeeper/crawlkeeper"
)

// DefaultBuffer is the number of notifications (committed batches) the
// queue holds before it drops.
const DefaultBuffer = 1024

// Queue is an in-process crawlkeeper.Queue.
type Queue struct {
	ch        chan []crawlkeeper.RecordRef
	published atomic.Int64
	dropped   atomic.Int64

	// mu guards closed against a send on a closed channel: Publish holds
	// it for reading, Close for writing.
	mu     sync.RWMutex
	closed bool
	// Drop, when set, is asked about each notification and drops it when
	// it returns true; tests use it to lose notifications on purpose.
	Drop func(refs []crawlkeeper.RecordRef) bool
}

var _ crawlkeeper.Queue = (*Queue)(nil)

// New returns a queue that buffers up to buffer notifications
// (DefaultBuffer when buffer <= 0).
func New(buffer int) *Queue {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Queue{ch: make(chan []crawlkeeper.RecordRef, buffer)}
}

// Publish implements crawlkeeper.Publisher. It copies refs.
func (q *Queue) Publish(refs []crawlkeeper.RecordRef) {
	if len(refs) == 0 {
		return
	}
	n := int64(len(refs))
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed || (q.Drop != nil && q.Drop(refs)) {
		q.dropped.Add(n)
		return
	}
	select {
	case q.ch <- append([]crawlkeeper.RecordRef(nil), refs...):
		q.published.Add(n)
	default:
		q.dropped.Add(n)
	}
}

// Stats implements crawlkeeper.Publisher.
func (q *Queue) Stats() crawlkeeper.QueueStats {
	return crawlkeeper.QueueStats{Published: q.published.Load(), Dropped: q.dropped.Load()}
}

// Receive implements crawlkeeper.Subscriber. After Close it still returns
// the buffered notifications, then crawlkeeper.ErrQueueClosed.
func (q *Queue) Receive(ctx context.Context) (*crawlkeeper.Notification, error) {
	select {
	case refs, ok := <-q.ch:
		if !ok {
			return nil, crawlkeeper.ErrQueueClosed
		}
		return crawlkeeper.NewNotification(refs, nil), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Len returns the number of buffered notifications.
func (q *Queue) Len() int { return len(q.ch) }

// Close implements crawlkeeper.Queue.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	return nil
}
