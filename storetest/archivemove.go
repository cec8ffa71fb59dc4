package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

// testMoveListing checks what a move does with its list, whichever way the
// store checks the selected state (in Go with crawlkeeper.PlanMoves, or in
// its engine): of a record listed twice, the first listing whose state
// still holds applies, once; moved ids come back in the order of the
// list; the archived payload reads back byte for byte.
func testMoveListing(t *testing.T, open func(tb testing.TB) ArchiveBackend) {
	t.Run("MoveListedTwice", func(t *testing.T) {
		ctx := context.Background()
		e := NewEnv(t, open)
		var ids []int64
		for i := 0; i < 4; i++ {
			ids = append(ids, e.Ingest(item(fmt.Sprint("M", i), fmt.Sprintf("https://move.test/%d", i), "body", "ünïcode \u00e9 \\\"quoted\\\"")).IDs[0])
		}
		before := map[int64][]byte{}
		state := map[int64]crawlkeeper.Move{}
		for _, id := range ids {
			r := e.MustGet(id)
			before[id] = r.Item
			state[id] = crawlkeeper.Move{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt}
		}
		with := func(id int64, reason crawlkeeper.ArchiveReason, version int64) crawlkeeper.Move {
			m := state[id]
			m.Reason, m.Version = reason, version
			return m
		}
		moves := []crawlkeeper.Move{
			with(ids[2], crawlkeeper.ReasonManual, 1),
			with(ids[0], crawlkeeper.ReasonStale, 7), // a state that does not hold
			with(ids[0], crawlkeeper.ReasonAge, 1),
			with(ids[0], crawlkeeper.ReasonEvent, 1),
			with(ids[1], crawlkeeper.ReasonStale, 2), // does not hold: stays
		}
		moved, err := e.Store.Archive(ctx, moves, e.Now)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(moved) != fmt.Sprint([]int64{ids[2], ids[0]}) {
			t.Fatalf("moved %v, want %v", moved, []int64{ids[2], ids[0]})
		}
		for id, reason := range map[int64]crawlkeeper.ArchiveReason{ids[2]: crawlkeeper.ReasonManual, ids[0]: crawlkeeper.ReasonAge} {
			r := e.MustGet(id)
			if !r.Archived() || r.ArchiveReason != reason || !bytes.Equal(r.Item, before[id]) {
				t.Fatalf("record %d: archived %v for %q with item %s, want %q and %s", id, r.Archived(), r.ArchiveReason, r.Item, reason, before[id])
			}
		}
		if r := e.MustGet(ids[1]); r.Archived() {
			t.Fatalf("record %d moved though its listed state did not hold", ids[1])
		}
		restored, err := e.Store.Restore(ctx, []int64{ids[0]})
		if err != nil || len(restored) != 1 {
			t.Fatalf("restore = %v %v", restored, err)
		}
		if r := e.MustGet(ids[0]); r.Archived() || !bytes.Equal(r.Item, before[ids[0]]) {
			t.Fatalf("restored record %d: archived %v, item %s", ids[0], r.Archived(), r.Item)
		}
		e.MustCheck()
	})
}
