package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// TestSearchUsesIndex checks the query plans: the FTS5 index does the
// matching and the records are read by primary key, never scanned.
func TestSearchUsesIndex(t *testing.T) {
	s := MustOpenStore(t)
	defer s.Close()
	ctx := context.Background()
	for _, q := range []crawlkeeper.SearchQuery{
		{Text: "open day"},
		{Text: `"open day" uni*`, Source: "en", Since: storetest.T0},
		{Text: "open", Order: crawlkeeper.SearchNewest},
		{Text: "open", Archived: true, EventFrom: storetest.T0},
	} {
		query, args, err := sqlite.SearchSQL(s, q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.ReadDB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		if !strings.Contains(all, "VIRTUAL TABLE INDEX") || strings.Contains(all, "SCAN t") {
			t.Errorf("query %+v: plan %q does not match through the FTS5 index and read records by id", q, all)
		}
	}
}

// TestSearchCheckFindsIndexDrift proves that Check notices a missing and
// an orphaned index entry, and a record written before search existed.
func TestSearchCheckFindsIndexDrift(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	defer s.Close()
	var ids []int64
	for _, title := range []string{"alpha one", "beta two", "gamma three"} {
		p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(`{"title":"`+title+`","url":"https://d.test/`+title+`"}`), 1, crawlkeeper.Meta{}, storetest.T0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: storetest.T0.Add(time.Duration(len(ids)) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.IDs[0])
	}
	db := s.DB()
	// The index loses the first record's entry; the second record's text
	// is erased behind the triggers' back (as before migration 010).
	if _, err := db.ExecContext(ctx, `INSERT INTO active_search (active_search, rowid, search_text) VALUES ('delete', ?, 'alpha one')`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DROP TRIGGER active_search_update`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE active SET search_text = NULL WHERE id = ?`, ids[1]); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, v := range rep.Violations {
		got[v.Kind] = append(got[v.Kind], v.ID)
	}
	if rep.OK || len(got["search_missing"]) != 2 || len(got["search_orphan"]) != 1 || got["search_orphan"][0] != ids[1] {
		t.Fatalf("check found %v (%+v), want the first two records missing and the second one's entry orphaned", got, rep.Violations)
	}
}
