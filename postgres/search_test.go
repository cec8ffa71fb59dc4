package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// TestSearchUsesIndex checks that the search queries can run on the GIN
// index. The test tables are tiny, where a sequential scan is cheaper, so
// the plan is taken with sequential scans disabled: an index that the
// query's shape could not use would still show a Seq Scan.
func TestSearchUsesIndex(t *testing.T) {
	s := testdb.MustOpen(t, testdb.PostgresURL(t), postgres.Open)
	ctx := context.Background()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET enable_seqscan`)
	for _, q := range []crawlkeeper.SearchQuery{
		{Text: "open day"},
		{Text: `"open day" uni* -closed`},
		{Text: "open", Order: crawlkeeper.SearchNewest, Until: storetest.T0},
		{Text: "open", Archived: true},
	} {
		query, args, err := postgres.SearchSQL(s, q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, strings.TrimSpace(line))
		}
		rows.Close()
		all := strings.Join(plan, "\n")
		table := "active"
		if q.Archived {
			table = "archive"
		}
		if !strings.Contains(all, "Bitmap Index Scan on "+table+"_search") {
			t.Errorf("query %+v does not use the GIN index:\n%s", q, all)
		}
	}
}

// TestSearchLanguage checks the per-source text search configuration: a
// German source is indexed with stemming, so another form of a word finds
// it, while the default ('simple') needs the word as written.
func TestSearchLanguage(t *testing.T) {
	s := testdb.MustOpen(t, testdb.PostgresURL(t), postgres.Open)
	ctx := context.Background()
	cfg := &crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"de": {SearchLanguage: "german"}}}
	var items []*crawlkeeper.Prepared
	for _, js := range []string{
		`{"title":"Die Häuser der Altstadt","url":"https://l.test/1","_source":"de"}`,
		`{"title":"Die Häuser am Hafen","url":"https://l.test/2","_source":"plain"}`,
	} {
		p, err := (&crawlkeeper.Preparer{Config: cfg}).Prepare([]byte(js), 1, crawlkeeper.Meta{}, storetest.T0)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, p)
	}
	if _, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: items, Now: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	titles := func(q string) []string {
		page, err := crawlkeeper.Search(ctx, s, cfg, crawlkeeper.SearchQuery{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range page.Hits {
			out = append(out, h.Record.Title)
		}
		return out
	}
	if got := titles("haus"); len(got) != 1 || got[0] != "Die Häuser der Altstadt" {
		t.Errorf("haus finds %v, want only the German-stemmed record", got)
	}
	if got := titles("häuser"); len(got) != 2 {
		t.Errorf("häuser finds %v, want both records", got)
	}
	rep, err := s.Check(ctx)
	if err != nil || !rep.OK {
		t.Fatalf("check: %+v %v", rep, err)
	}
}
