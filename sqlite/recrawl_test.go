package sqlite_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// TestRecrawlReadUsesIndex checks that the advisor's read of a source is
// one range of the per-source index, covered: the packed value comes from
// the index, not from the rows, which the expression in recrawl.go matching
// the migration's makes possible.
func TestRecrawlReadUsesIndex(t *testing.T) {
	s := MustOpenStore(t)
	defer s.Close()
	rows, err := s.ReadDB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN SELECT "+sqlite.RecrawlPack+" FROM active WHERE source = ? AND last_updated_at >= ? AND last_updated_at < ?", "jobs", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if all := strings.Join(plan, "; "); !strings.Contains(all, "USING COVERING INDEX active_source_last_updated_at (source=? AND last_updated_at>? AND last_updated_at<?)") {
		t.Fatalf("plan %q: the read does not come from the per-source index alone", all)
	}
}

// TestRecrawlReadKeepsReaderCache checks that the connections the
// advisor's read shrank the page cache of go back to the pool with the
// reader's cache: a reader left with the small one would make every later
// query on it read its pages again.
func TestRecrawlReadKeepsReaderCache(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	defer s.Close()
	var at time.Time
	g := &crawlkeeper.Ingester{Store: s, Config: &crawlkeeper.Config{}, Now: func() time.Time { return at }}
	for k := 0; k < 3; k++ {
		// Three delivery times, so the read splits into ranges on
		// connections of their own.
		at = bench.Now.Add(time.Duration(k) * time.Hour)
		items := make([]map[string]any, 10)
		metas := make([]crawlkeeper.Meta, len(items))
		for i := range items {
			items[i] = bench.Item(k*len(items)+i, 0)
			delete(items[i], "_source")
			metas[i] = crawlkeeper.Meta{Source: "jobs"}
		}
		if _, err := g.IngestItems(ctx, items, metas); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.RecrawlRecords(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 {
		t.Fatalf("read %d records, want 30", len(recs))
	}
	// Every idle reader, the ones the read used among them.
	idle := s.ReadDB().Stats().Idle
	if idle == 0 {
		t.Fatal("no idle reader after the read")
	}
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := s.ReadDB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var size int
		if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size != -sqlite.ReaderCache {
			t.Errorf("a reader's cache_size is %d after the advisor's read, want %d", size, -sqlite.ReaderCache)
		}
	}
}
