package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// testDateErrorCounts checks the per-source counts of active records with
// date errors that a store keeps as records change
// (crawlkeeper.DateErrorCounter): after every kind of write that changes
// what is counted, the counts equal the active records with date errors
// read one by one, Stats reports them, and check is clean.
func testDateErrorCounts(t *testing.T, open func(tb testing.TB) ArchiveBackend) {
	e := NewEnv(t, open)
	c, counts := any(e.Store).(crawlkeeper.DateErrorCounter)
	if !counts {
		t.Skipf("%T keeps no date error counts (crawlkeeper.DateErrorCounter)", e.Store)
	}
	ctx := context.Background()
	var ids []int64
	step := func(what string) {
		t.Helper()
		got, err := c.ActiveDateErrors(ctx)
		ok(t, err)
		want := map[string]int64{}
		for _, id := range ids {
			if r := e.MustGet(id); r.ArchivedAt == nil && len(r.DateErrors) > 0 {
				want[r.Source]++
			}
		}
		st, err := e.Store.Stats(ctx)
		ok(t, err)
		for _, src := range []string{"a", "b"} {
			if got[src] != want[src] {
				t.Fatalf("after %s: source %q counts %d active records with date errors, the records have %d (counts %v)", what, src, got[src], want[src], got)
			}
			if ss := st.Sources[src]; want[src] != 0 && (ss == nil || ss.ActiveDateErrors != want[src]) {
				t.Fatalf("after %s: source %q has %d active records with date errors, stats reports %+v", what, src, want[src], ss)
			}
		}
		e.MustCheck()
	}
	item := func(src string, i int, deadline string) string {
		return fmt.Sprintf(`{"_source":%q,"title":"Job %d","url":"https://d.test/%d","deadline":%q}`, src, i, i, deadline)
	}
	for i := 0; i < 6; i++ {
		src, deadline := "a", "Rolling"
		if i%2 == 1 {
			src = "b"
		}
		if i >= 4 {
			deadline = T0.Add(30 * 24 * time.Hour).Format(time.RFC3339)
		}
		ids = append(ids, e.Ingest(item(src, i, deadline)).IDs[0])
	}
	step("ingest")
	// A re-crawl with a date that reads loses its errors; one without
	// gains them; a content change keeps them.
	e.Now = T0.Add(time.Hour)
	e.Ingest(item("a", 0, T0.Add(40*24*time.Hour).Format(time.RFC3339)), item("a", 4, "ASAP"),
		fmt.Sprintf(`{"_source":"b","title":"Job 1","url":"https://d.test/1","deadline":"Rolling","salary":"more"}`))
	step("re-crawls")
	// Moves out of and back into the active set.
	r := e.MustGet(ids[1])
	moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, T0.Add(2*time.Hour))
	ok(t, err)
	if len(moved) != 1 {
		t.Fatalf("archive moved %v", moved)
	}
	step("archive")
	// A delivery that revives the archived record.
	e.Now = T0.Add(3 * time.Hour)
	e.Ingest(fmt.Sprintf(`{"_source":"b","title":"Job 1","url":"https://d.test/1","deadline":"Rolling","salary":"most"}`))
	step("revival")
	r = e.MustGet(ids[1])
	if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, T0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	restored, err := e.Store.Restore(ctx, []int64{ids[1]})
	ok(t, err)
	if len(restored) != 1 {
		t.Fatalf("restore restored %v", restored)
	}
	step("restore")
	// Event fields read again, by an archive pass's re-read and by the
	// dates processor.
	r = e.MustGet(ids[2])
	at := T0.Add(50 * 24 * time.Hour)
	n, err := e.Store.UpdateEvents(ctx, []crawlkeeper.EventUpdate{{ID: r.ID, Version: r.Version, EventAt: &at}})
	ok(t, err)
	if n != 1 {
		t.Fatalf("update events wrote %d", n)
	}
	step("update events")
	if sc, isScan := any(e.Store).(crawlkeeper.ScanStore); isScan {
		r = e.MustGet(ids[5])
		skipped, err := sc.WriteProcessed(ctx, []crawlkeeper.ProcessedWrite{{ID: r.ID, Version: r.Version, ProcessedAt: T0, Chain: "dates", SetEvent: true, DateErrors: []string{"Someday"}}})
		ok(t, err)
		if len(skipped) != 0 {
			t.Fatalf("write processed skipped %v", skipped)
		}
		step("write processed")
	}
}
