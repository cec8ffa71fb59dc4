package crawlkeeper_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

var planT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func planPrepare(t *testing.T, js string) *crawlkeeper.Prepared {
	t.Helper()
	p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(js), 1, crawlkeeper.Meta{}, planT0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanCoalescesPerRecord(t *testing.T) {
	a1 := planPrepare(t, `{"title":"a","url":"https://p.test/a","v":1}`)
	a2 := planPrepare(t, `{"title":"a","url":"https://p.test/a","v":2}`)
	b := planPrepare(t, `{"title":"b","url":"https://p.test/b"}`)
	c := planPrepare(t, `{"title":"c","url":"https://p.test/c"}`)
	archivedAt := planT0.Add(-time.Hour)
	state := map[string]*crawlkeeper.Record{
		b.Key: {ID: 7, Key: b.Key, ContentHash: b.ContentHash, Version: 1, CrawledAt: planT0.Add(-2 * time.Hour), LastUpdatedAt: planT0.Add(-2 * time.Hour), LastChangedAt: planT0.Add(-2 * time.Hour)},
		c.Key: {ID: 9, Key: c.Key, ContentHash: "old", Version: 4, CrawledAt: planT0.Add(-2 * time.Hour), LastUpdatedAt: planT0.Add(-2 * time.Hour), LastChangedAt: planT0.Add(-2 * time.Hour), ArchivedAt: &archivedAt},
	}
	batch := &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{a1, b, a2, c, a2}, Now: planT0, HistoryLimit: func(string) int { return 2 }}
	if n := crawlkeeper.NewKeyCount(batch.Items, state); n != 1 {
		t.Fatalf("NewKeys = %d, want 1", n)
	}
	w, res := crawlkeeper.PlanIngest(batch, state, []int64{20})
	want := fmt.Sprint([]crawlkeeper.Outcome{crawlkeeper.OutcomeInserted, crawlkeeper.OutcomeUnchanged, crawlkeeper.OutcomeChanged, crawlkeeper.OutcomeRevived, crawlkeeper.OutcomeUnchanged})
	if got := fmt.Sprint(res.Outcomes); got != want {
		t.Fatalf("outcomes %s, want %s", got, want)
	}
	if fmt.Sprint(res.IDs) != "[20 7 20 9 20]" {
		t.Fatalf("ids %v", res.IDs)
	}
	if fmt.Sprint(res.Touched) != "[{20 2} {9 5}]" {
		t.Fatalf("touched %v", res.Touched)
	}
	// a: one insert in its final state; c: revived, so deleted from the
	// archive and inserted; b: touched.
	if len(w.InsertActive) != 2 || w.InsertActive[1].ID != 20 || w.InsertActive[1].Version != 2 || w.InsertActive[0].ID != 9 || w.InsertActive[0].Archived() {
		t.Fatalf("inserts %+v", w.InsertActive)
	}
	if fmt.Sprint(w.DeleteArchive) != "[9]" || len(w.TouchActive) != 1 || w.TouchActive[0].ID != 7 || len(w.UpdateActive) != 0 {
		t.Fatalf("writes %+v", w)
	}
	// History: a's version 1, c's version 4; c's limit of 2 trims up to 4-2.
	if len(w.History) != 2 || fmt.Sprint(w.TrimHistory) != "[{9 2}]" {
		t.Fatalf("history %+v trims %v", w.History, w.TrimHistory)
	}
	if state[c.Key].Version != 4 || !state[c.Key].Archived() {
		t.Fatal("Plan modified the state it was given")
	}
}

func TestTrimDropsNewVersionsBeyondTheLimit(t *testing.T) {
	var items []*crawlkeeper.Prepared
	for i := 0; i < 5; i++ {
		items = append(items, planPrepare(t, fmt.Sprintf(`{"title":"h","url":"https://p.test/h","n":%d}`, i)))
	}
	w, _ := crawlkeeper.PlanIngest(&crawlkeeper.IngestBatch{Items: items, Now: planT0, HistoryLimit: func(string) int { return 2 }}, map[string]*crawlkeeper.Record{}, []int64{1})
	var vs []int64
	for _, h := range w.History {
		vs = append(vs, h.Version)
	}
	if fmt.Sprint(vs) != "[3 4]" || fmt.Sprint(w.TrimHistory) != "[{1 2}]" {
		t.Fatalf("kept %v, trims %v", vs, w.TrimHistory)
	}
}
