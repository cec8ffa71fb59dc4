package storetest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// testFetchCounts checks the delivery counts ingest keeps per record for
// the recrawl advisor (crawlkeeper.FetchCounts): each re-delivery adds a
// refetch and the interval since the previous delivery, to the changed or
// the unchanged time, whether the store writes it as a narrow touch, as a
// touch that changes the event fields, as a content change, twice in one
// batch, or to an archived record.
func testFetchCounts(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	item := func(i int, body, target string) string {
		return fmt.Sprintf(`{"_source":"f","_target":%q,"title":"Page %d","url":"https://f.test/%d","body":%q}`, target, i, i, body)
	}
	want := func(id int64, w crawlkeeper.FetchCounts) {
		t.Helper()
		r := e.MustGet(id)
		if r.Fetches == nil || *r.Fetches != w {
			t.Fatalf("record %d: fetches %+v, want %+v", id, r.Fetches, w)
		}
	}
	h := time.Hour.Microseconds()
	e.Now = T0
	ids := e.Ingest(item(1, "a", "t1"), item(2, "a", "t1")).IDs
	want(ids[0], crawlkeeper.FetchCounts{})
	// An hour later, unchanged: page 1 as it was (a narrow touch), page 2
	// from another target (a touch that rewrites the target too).
	e.Now = T0.Add(time.Hour)
	e.Ingest(item(1, "a", "t1"), item(2, "a", "t2"))
	want(ids[0], crawlkeeper.FetchCounts{Refetches: 1, UnchangedUS: h})
	want(ids[1], crawlkeeper.FetchCounts{Refetches: 1, UnchangedUS: h})
	// Two hours later, changed.
	e.Now = T0.Add(3 * time.Hour)
	e.Ingest(item(1, "b", "t1"))
	logTwoHours := math.Log((2 * time.Hour).Seconds())
	want(ids[0], crawlkeeper.FetchCounts{Refetches: 2, Changes: 1, ChangedUS: 2 * h, UnchangedUS: h, ChangedLog: logTwoHours})
	// Twice in one batch an hour later: the second closes an empty
	// interval.
	e.Now = T0.Add(4 * time.Hour)
	e.Ingest(item(1, "b", "t1"), item(1, "b", "t1"), item(2, "a", "t2"))
	want(ids[0], crawlkeeper.FetchCounts{Refetches: 4, Changes: 1, ChangedUS: 2 * h, UnchangedUS: 2 * h, ChangedLog: logTwoHours})
	want(ids[1], crawlkeeper.FetchCounts{Refetches: 2, UnchangedUS: 4 * h})
	// A delivery older than the last one adds no time.
	e.Now = T0.Add(2 * time.Hour)
	e.Ingest(item(2, "a", "t2"))
	want(ids[1], crawlkeeper.FetchCounts{Refetches: 3, UnchangedUS: 4 * h})
	e.MustCheck()
}
