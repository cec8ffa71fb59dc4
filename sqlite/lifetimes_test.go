package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// TestRecentLifetimes archives records at different times and reads their
// lifetimes back, newest archived first, and checks that the query walks
// the archived_at index instead of scanning the archive.
func TestRecentLifetimes(t *testing.T) {
	ctx := context.Background()
	st := MustOpenStore(t)
	defer st.Close()
	t0 := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	cfg := &crawlkeeper.Config{}
	g := &crawlkeeper.Ingester{Store: st, Config: cfg, Now: func() time.Time { return now }, Rules: crawlkeeper.NewRules(cfg)}
	ingest := func(body string) {
		t.Helper()
		if _, err := g.Ingest(ctx, strings.NewReader(body), crawlkeeper.Meta{Source: "jobs"}); err != nil {
			t.Fatal(err)
		}
	}
	ingest(`{"title":"a","url":"https://l.test/a"}` + "\n" + `{"title":"b","url":"https://l.test/b"}`)
	now = t0.Add(3 * time.Hour)
	ingest(`{"title":"b","url":"https://l.test/b"}`) // b lives 3h
	page, err := st.List(ctx, crawlkeeper.RecordQuery{Order: crawlkeeper.OrderID})
	if err != nil || len(page.Records) != 2 {
		t.Fatalf("list: %v %+v", err, page)
	}
	for i, r := range page.Records {
		// a is archived first, b an hour later: b comes first.
		at := now.Add(time.Duration(i+1) * time.Hour)
		if _, err := st.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.RecentLifetimes(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []crawlkeeper.Lifetime{{Source: "jobs", Lifetime: 3 * time.Hour}, {Source: "jobs", Lifetime: 0}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("lifetimes = %+v, want %+v", got, want)
	}
	if got, err := st.RecentLifetimes(ctx, 1); err != nil || len(got) != 1 {
		t.Fatalf("limit 1: %v %+v", err, got)
	}
	if _, err := st.RecentLifetimes(ctx, 0); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Fatalf("limit 0: %v, want invalid", err)
	}

	rows, err := st.ReadDB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqlite.RecentLifetimesQuery, 10)
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
	p := strings.Join(plan, "; ")
	if !strings.Contains(p, "archive_archived_at") || strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("plan %q: want a walk of archive_archived_at without a sort", p)
	}
}
