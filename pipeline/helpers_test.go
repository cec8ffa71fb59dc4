package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// MustOpenStore opens an empty embedded store in a temporary folder.
func MustOpenStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "crawlkeeper.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// ingest stores n items numbered from first, batch items per commit, and
// returns their ids in order.
func ingest(tb testing.TB, st crawlkeeper.Store, first, n, batch int, hooks ...crawlkeeper.AfterCommit) []int64 {
	tb.Helper()
	var buf bytes.Buffer
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&buf, `{"title":"record %d","url":"https://p.test/%d","body":"text of record %d","deadline":"2030-01-%02d"}`+"\n", i, i, i, 1+i%28)
	}
	var ids []int64
	hooks = append(hooks, func(_ context.Context, _ []*crawlkeeper.Prepared, res *crawlkeeper.IngestResult) {
		ids = append(ids, res.IDs...)
	})
	g := &crawlkeeper.Ingester{Store: st, Now: func() time.Time { return t0 }, BatchSize: batch, AfterCommit: hooks}
	sum, err := g.Ingest(context.Background(), &buf, crawlkeeper.Meta{Source: "p.test"})
	if err != nil || sum.Rejected != 0 {
		tb.Fatalf("ingest: %v %+v", err, sum)
	}
	return ids
}

// counter is a processor that counts its calls per record id and stores
// the count it saw in derived.
type counter struct {
	name    string
	version int
	mu      sync.Mutex
	calls   map[int64]int
	// before, when set, runs first on every call.
	before func(ctx context.Context, r *crawlkeeper.Record) error
}

func newCounter(name string) *counter {
	return &counter{name: name, version: 1, calls: map[int64]int{}}
}

func (c *counter) Name() string { return c.name }
func (c *counter) Version() int { return c.version }

func (c *counter) Process(ctx context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	if c.before != nil {
		if err := c.before(ctx, r); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.calls[r.ID]++
	n := c.calls[r.ID]
	c.mu.Unlock()
	derived[c.name] = map[string]any{"calls": n, "title": r.Title}
	return nil
}

func (c *counter) snapshot() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

func (c *counter) reset() {
	c.mu.Lock()
	c.calls = map[int64]int{}
	c.mu.Unlock()
}

// failing fails on the ids in bad and counts its attempts.
type failing struct {
	mu       sync.Mutex
	bad      map[int64]bool
	attempts map[int64]int
}

func (f *failing) Name() string { return "flaky" }
func (f *failing) Version() int { return 1 }
func (f *failing) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[r.ID]++
	if f.bad[r.ID] {
		derived["flaky"] = "partial" // must not survive the failure
		return errors.New("cannot handle this record")
	}
	derived["flaky"] = "ok"
	return nil
}

func (f *failing) tries(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[id]
}

// allRecords returns every active record in id order.
func allRecords(tb testing.TB, st crawlkeeper.Store) []*crawlkeeper.Record {
	tb.Helper()
	var out []*crawlkeeper.Record
	after := int64(0)
	for {
		recs, err := st.ScanActive(context.Background(), after, 0, 1000)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, recs...)
		if len(recs) < 1000 {
			return out
		}
		after = recs[len(recs)-1].ID
	}
}
