package mongodb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/storetest"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func openCrash(t *testing.T, u string) *mongodb.Store {
	t.Helper()
	s, err := mongodb.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopenLater opens the store at u again once the crashed process's
// intents are stale: Open and every other repair leave younger intents
// alone, as they may belong to a move still running elsewhere.
func reopenLater(t *testing.T, u string) *mongodb.Store {
	t.Helper()
	s := openCrash(t, u)
	if err := mongodb.RepairAll(s); err != nil {
		t.Fatal(err)
	}
	return s
}

var errCrash = errors.New("simulated crash")

// copies counts the documents of id in active and in archive.
func copies(t *testing.T, s *mongodb.Store, id int64) (active, archived int64) {
	t.Helper()
	ctx := context.Background()
	var err error
	if active, err = s.Database().Collection("active").CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		t.Fatal(err)
	}
	if archived, err = s.Database().Collection("archive").CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		t.Fatal(err)
	}
	return active, archived
}

func mustCheck(t *testing.T, s *mongodb.Store) {
	t.Helper()
	rep, err := s.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("check: %+v", rep.Violations)
	}
}

// TestCrashDuringMove stops moves after each of their steps, as a killed
// process would, then opens the store again (which repairs) and checks
// that every record is stored exactly once, in the place the interrupted
// move had reached, and that Check passes.
func TestCrashDuringMove(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		step string
		// archived says where the record must be after the repair.
		archived bool
	}{
		{"archive:locked", false},
		{"archive:copied", true},
		{"archive:deleted", true},
		{"active:locked", true},
		{"active:inserted", false},
		{"active:deleted", false},
	} {
		t.Run(tc.step, func(t *testing.T) {
			u := testdb.MongoURL(t)
			s := openCrash(t, u)
			e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
			res := e.Ingest(`{"title":"a","url":"https://c.test/a"}`, `{"title":"b","url":"https://c.test/b"}`)
			moves := func() []crawlkeeper.Move {
				var ms []crawlkeeper.Move
				for _, id := range res.IDs {
					r := e.MustGet(id)
					ms = append(ms, crawlkeeper.Move{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual})
				}
				return ms
			}
			crash := func(step string) error {
				if step == tc.step {
					return errCrash
				}
				return nil
			}
			if tc.step[:7] == "archive" {
				mongodb.SetCrashAt(s, crash)
				if _, err := s.Archive(ctx, moves(), e.Now); !errors.Is(err, errCrash) {
					t.Fatalf("archive: %v, want the simulated crash", err)
				}
			} else {
				if _, err := s.Archive(ctx, moves(), e.Now); err != nil {
					t.Fatal(err)
				}
				mongodb.SetCrashAt(s, crash)
				if _, err := s.Restore(ctx, res.IDs); !errors.Is(err, errCrash) {
					t.Fatalf("restore: %v, want the simulated crash", err)
				}
			}
			// Before any repair, reads, listings and Check see one record
			// per id: the move is in flight.
			for _, id := range res.IDs {
				e.MustGet(id)
			}
			listed := map[int64]int{}
			for _, archived := range []bool{false, true} {
				page, err := s.List(ctx, crawlkeeper.RecordQuery{Archived: archived, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page.Records {
					listed[r.ID]++
				}
			}
			for _, id := range res.IDs {
				if listed[id] != 1 {
					t.Fatalf("record %d listed %d times during an interrupted move, want once", id, listed[id])
				}
			}
			mustCheck(t, s)
			s.Close()

			s2 := reopenLater(t, u)
			mustCheck(t, s2)
			for _, id := range res.IDs {
				a, r := copies(t, s2, id)
				if a+r != 1 {
					t.Fatalf("record %d: %d active and %d archived copies after the repair", id, a, r)
				}
				if (r == 1) != tc.archived {
					t.Fatalf("record %d archived = %v after the repair, want %v", id, r == 1, tc.archived)
				}
			}
			if n, _ := s2.Database().Collection("moves").CountDocuments(ctx, bson.D{}); n != 0 {
				t.Fatalf("%d move intents left after the repair", n)
			}
			// The next pass completes what is left.
			e2 := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s2 })
			if !tc.archived {
				var ms []crawlkeeper.Move
				for _, id := range res.IDs {
					r := e2.MustGet(id)
					ms = append(ms, crawlkeeper.Move{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual})
				}
				moved, err := s2.Archive(ctx, ms, e.Now)
				if err != nil || len(moved) != 2 {
					t.Fatalf("archive after the repair: %v %v", moved, err)
				}
			}
			for _, id := range res.IDs {
				if r := e2.MustGet(id); !r.Archived() {
					t.Fatalf("record %d is not archived", id)
				}
			}
			mustCheck(t, s2)
		})
	}
}

// TestCrashThenChange stops a move to archive between copy and delete,
// changes the record before any repair, and checks that the changed
// active record wins over the stale archive copy.
func TestCrashThenChange(t *testing.T) {
	ctx := context.Background()
	u := testdb.MongoURL(t)
	s := openCrash(t, u)
	e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
	id := e.Ingest(`{"title":"a","url":"https://c.test/a","v":1}`).IDs[0]
	r := e.MustGet(id)
	mongodb.SetCrashAt(s, func(step string) error {
		if step == "archive:copied" {
			return errCrash
		}
		return nil
	})
	if _, err := s.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonAge}}, e.Now); !errors.Is(err, errCrash) {
		t.Fatalf("archive: %v", err)
	}
	mongodb.SetCrashAt(s, nil)
	e.Now = e.Now.Add(time.Hour)
	if res := e.Ingest(`{"title":"a","url":"https://c.test/a","v":2}`); res.Outcomes[0] != crawlkeeper.OutcomeChanged {
		t.Fatalf("ingest during the interrupted move: %v", res.Outcomes)
	}
	s.Close()

	s2 := reopenLater(t, u)
	mustCheck(t, s2)
	if a, r := copies(t, s2, id); a != 1 || r != 0 {
		t.Fatalf("%d active and %d archived copies, want the changed active record only", a, r)
	}
	got, err := s2.Get(ctx, id)
	if err != nil || got.Archived() || got.Version != 2 {
		t.Fatalf("record after the repair: %+v %v", got, err)
	}
	hist, err := s2.History(ctx, id)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %v", hist, err)
	}
}

// TestCrashDuringPurge stops a purge after the record left the archive and
// before its history and key claim were deleted, then opens the store again:
// the repair finishes the purge, Check passes and the key is free.
func TestCrashDuringPurge(t *testing.T) {
	ctx := context.Background()
	u := testdb.MongoURL(t)
	s := openCrash(t, u)
	e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
	id := e.Ingest(`{"title":"a","url":"https://c.test/a","v":1}`).IDs[0]
	e.Now = e.Now.Add(time.Hour)
	e.Ingest(`{"title":"a","url":"https://c.test/a","v":2}`)
	r := e.MustGet(id)
	if moved, err := s.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonAge}}, e.Now); err != nil || len(moved) != 1 {
		t.Fatalf("archive: %v %v", moved, err)
	}
	mongodb.SetCrashAt(s, func(step string) error {
		if step == "purge:deleted" {
			return errCrash
		}
		return nil
	})
	if _, err := s.Purge(ctx, []crawlkeeper.RecordState{crawlkeeper.StateOf(e.MustGet(id))}); !errors.Is(err, errCrash) {
		t.Fatalf("purge: %v, want the simulated crash", err)
	}
	if n, _ := s.Database().Collection("history").CountDocuments(ctx, bson.D{{Key: "record_id", Value: id}}); n != 1 {
		t.Fatalf("history entries before the repair: %d, want the one the crash left", n)
	}
	s.Close()

	s2 := reopenLater(t, u)
	mustCheck(t, s2)
	if a, r := copies(t, s2, id); a+r != 0 {
		t.Fatalf("%d active and %d archived copies of a purged record", a, r)
	}
	if n, _ := s2.Database().Collection("history").CountDocuments(ctx, bson.D{{Key: "record_id", Value: id}}); n != 0 {
		t.Fatalf("history of a purged record left after the repair: %d", n)
	}
	if n, _ := s2.Database().Collection("moves").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d intents left after the repair", n)
	}
	e2 := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s2 })
	again := e2.Ingest(`{"title":"a","url":"https://c.test/a","v":2}`)
	if again.Outcomes[0] != crawlkeeper.OutcomeInserted || again.IDs[0] == id {
		t.Fatalf("ingest after the purge: %+v", again)
	}
	mustCheck(t, s2)
}

// A purge stopped between deleting the record and its history leaves an
// intent: check, run before the intent is stale enough to repair, must not
// call the history an orphan (the torture test's final check did).
func TestCheckDuringPurge(t *testing.T) {
	ctx := context.Background()
	s := openCrash(t, testdb.MongoURL(t))
	e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
	id := e.Ingest(`{"title":"a","url":"https://c.test/a","v":1}`).IDs[0]
	e.Now = e.Now.Add(time.Hour)
	e.Ingest(`{"title":"a","url":"https://c.test/a","v":2}`)
	r := e.MustGet(id)
	if _, err := s.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonAge}}, e.Now); err != nil {
		t.Fatal(err)
	}
	mongodb.SetCrashAt(s, func(step string) error {
		if step == "purge:deleted" {
			return errCrash
		}
		return nil
	})
	if _, err := s.Purge(ctx, []crawlkeeper.RecordState{crawlkeeper.StateOf(e.MustGet(id))}); !errors.Is(err, errCrash) {
		t.Fatalf("purge: %v, want the simulated crash", err)
	}
	mongodb.SetCrashAt(s, nil)
	mustCheck(t, s)
}

// TestIngestDuringPurge runs a whole purge of an archived record between
// the moment an ingest of its changed item read it and the moment that
// ingest writes: the ingest's history entry lands after the purge deleted
// the record's history. Check must pass at once (the purge's intent stays
// as a tombstone) and the repair must delete the late entry.
func TestIngestDuringPurge(t *testing.T) {
	ctx := context.Background()
	u := testdb.MongoURL(t)
	s := openCrash(t, u)
	e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
	id := e.Ingest(`{"title":"a","url":"https://c.test/a","v":1}`).IDs[0]
	r := e.MustGet(id)
	if moved, err := s.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonAge}}, e.Now); err != nil || len(moved) != 1 {
		t.Fatalf("archive: %v %v", moved, err)
	}
	purged := false
	mongodb.SetCrashAt(s, func(step string) error {
		if step != "ingest:planned" || purged {
			return nil
		}
		purged = true
		res, err := s.Purge(ctx, []crawlkeeper.RecordState{crawlkeeper.StateOf(e.MustGet(id))})
		if err != nil || len(res.Purged) != 1 {
			t.Errorf("purge between read and write: %+v %v", res, err)
		}
		return nil
	})
	e.Now = e.Now.Add(time.Hour)
	b := &crawlkeeper.IngestBatch{Now: e.Now, Items: []*crawlkeeper.Prepared{e.Prepare(`{"title":"a","url":"https://c.test/a","v":2}`)}}
	if _, err := s.Ingest(ctx, b); err == nil {
		t.Fatal("ingest of a record purged after it was read succeeded; want a conflict")
	} else {
		t.Logf("ingest: %v", err)
	}
	mongodb.SetCrashAt(s, nil)
	if !purged {
		t.Fatal("the purge did not run")
	}
	if n, _ := s.Database().Collection("history").CountDocuments(ctx, bson.D{{Key: "record_id", Value: id}}); n != 1 {
		t.Fatalf("history entries of the purged record after the late write: %d, want 1", n)
	}
	mustCheck(t, s)
	if n, _ := s.Database().Collection("moves").CountDocuments(ctx, bson.D{{Key: "_id", Value: id}, {Key: "to", Value: "purged"}}); n != 1 {
		t.Fatalf("%d tombstones of the purged record, want 1", n)
	}
	if err := mongodb.RepairAll(s); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Database().Collection("history").CountDocuments(ctx, bson.D{{Key: "record_id", Value: id}}); n != 0 {
		t.Fatalf("history of the purged record after the repair: %d, want 0", n)
	}
	if n, _ := s.Database().Collection("moves").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d intents after the repair, want 0", n)
	}
	mustCheck(t, s)
	// The retried delivery makes a new record.
	again := e.Ingest(`{"title":"a","url":"https://c.test/a","v":2}`)
	if again.Outcomes[0] != crawlkeeper.OutcomeInserted || again.IDs[0] == id {
		t.Fatalf("ingest after the purge: %+v", again)
	}
	mustCheck(t, s)
}

// TestNewKeyTwiceLosesToConcurrentInsert delivers one new key twice, with
// two contents, in one batch, while another ingest inserts that key first:
// the batch's insert loses, and the history of its second delivery must
// not stay behind as the history of an id that never existed.
func TestNewKeyTwiceLosesToConcurrentInsert(t *testing.T) {
	ctx := context.Background()
	s := openCrash(t, testdb.MongoURL(t))
	e := storetest.NewEnv(t, func(testing.TB) crawlkeeper.Store { return s })
	raced := false
	mongodb.SetCrashAt(s, func(step string) error {
		if step != "ingest:planned" || raced {
			return nil
		}
		raced = true
		e.Ingest(`{"title":"a","url":"https://c.test/a","v":0}`)
		return nil
	})
	b := &crawlkeeper.IngestBatch{Now: e.Now, Items: []*crawlkeeper.Prepared{
		e.Prepare(`{"title":"a","url":"https://c.test/a","v":1}`),
		e.Prepare(`{"title":"a","url":"https://c.test/a","v":2}`)}}
	if _, err := s.Ingest(ctx, b); err == nil {
		t.Fatal("the batch's insert of a key inserted meanwhile succeeded; want a conflict")
	}
	mongodb.SetCrashAt(s, nil)
	if !raced {
		t.Fatal("the concurrent insert did not run")
	}
	mustCheck(t, s)
	if n, _ := s.Database().Collection("history").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d history entries after a lost insert, want 0", n)
	}
}
