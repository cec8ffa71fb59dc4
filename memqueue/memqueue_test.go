package memqueue_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/queuetest"
)

func TestConformance(t *testing.T) {
	queuetest.Run(t, func(tb testing.TB) func() crawlkeeper.Queue {
		q := memqueue.New(0)
		return func() crawlkeeper.Queue { return q }
	})
}

// TestDropsWhenFull shows the bound: with nobody receiving, the queue keeps
// its buffer's worth and drops the rest, counting every record.
func TestDropsWhenFull(t *testing.T) {
	q := memqueue.New(4)
	for i := 0; i < 10; i++ {
		q.Publish([]crawlkeeper.RecordRef{{ID: int64(i + 1), Version: 1}, {ID: int64(i + 100), Version: 1}})
	}
	if s := q.Stats(); s.Published != 8 || s.Dropped != 12 || q.Len() != 4 {
		t.Fatalf("stats %+v, len %d; want 8 published, 12 dropped, 4 buffered", s, q.Len())
	}
}
