package mongodb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// oldRules key URLs and titles as sent, as before canonical keys; the
// tests re-key under the current defaults.
func oldRules(t *testing.T) *crawlkeeper.Config {
	t.Helper()
	old, err := config.Parse([]byte("defaults:\n  key_rules:\n    url: {canonical: false}\n    title: {fold: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return old
}

// rekeyFixture is a store whose records are delivered under oldRules or
// the current rules, each delivery carrying a number n of its own, so
// that a test can find every acknowledged delivery afterwards.
type rekeyFixture struct {
	t        *testing.T
	s        *mongodb.Store
	old, cur *crawlkeeper.Config
	now      time.Time
	n        int
	// acked are the numbers of the deliveries the store acknowledged.
	acked []int
}

func newRekeyFixture(t *testing.T) *rekeyFixture {
	return &rekeyFixture{t: t, s: testdb.MustOpen(t, testdb.MongoURL(t), mongodb.Open), old: oldRules(t), cur: &crawlkeeper.Config{},
		now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// try delivers one changed item of page (title, url) under cfg and
// returns the store's answer.
func (f *rekeyFixture) try(cfg *crawlkeeper.Config, title, url string, extra ...string) (*crawlkeeper.IngestResult, error) {
	f.t.Helper()
	f.n++
	f.now = f.now.Add(time.Minute)
	m := map[string]any{"_source": "s", "title": title, "url": url, "n": f.n}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	p, err := (&crawlkeeper.Preparer{Config: cfg}).Prepare(b, 1, crawlkeeper.Meta{}, f.now)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.s.Ingest(context.Background(), &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: f.now, HistoryLimit: func(string) int { return 1000 }})
	if err == nil {
		f.acked = append(f.acked, f.n)
	}
	return res, err
}

// deliver is try that must succeed; it returns the record's id.
func (f *rekeyFixture) deliver(cfg *crawlkeeper.Config, title, url string, extra ...string) int64 {
	f.t.Helper()
	res, err := f.try(cfg, title, url, extra...)
	if err != nil {
		f.t.Fatalf("deliver %s: %v", url, err)
	}
	return res.IDs[0]
}

// conflict is try that the store must refuse with ECONFLICT.
func (f *rekeyFixture) conflict(cfg *crawlkeeper.Config, title, url string) {
	f.t.Helper()
	if _, err := f.try(cfg, title, url); crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT {
		f.t.Errorf("delivery of %s while a merge holds its record: %v, want %s", url, err, crawlkeeper.ECONFLICT)
	}
}

func (f *rekeyFixture) get(id int64) *crawlkeeper.Record {
	f.t.Helper()
	r, err := f.s.Get(context.Background(), id)
	if err != nil {
		f.t.Fatalf("get %d: %v", id, err)
	}
	return r
}

// plan decides the merge of records ids under the current rules, as a
// rekey run would.
func (f *rekeyFixture) plan(ids ...int64) *crawlkeeper.RekeyMerge {
	f.t.Helper()
	ctx := context.Background()
	var recs []*crawlkeeper.Record
	for _, id := range ids {
		recs = append(recs, f.get(id))
	}
	hist, err := f.s.HistoryMany(ctx, ids)
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := f.cur.Policy(recs[0].Source)
	if err != nil {
		f.t.Fatal(err)
	}
	key, parts, err := crawlkeeper.RecomputeKey(p, recs[0].Item)
	if err != nil {
		f.t.Fatal(err)
	}
	return crawlkeeper.PlanRekeyMerge(recs, hist, key, parts, f.now)
}

func (f *rekeyFixture) merge(m *crawlkeeper.RekeyMerge) bool {
	f.t.Helper()
	applied, err := f.s.MergeRecords(context.Background(), []*crawlkeeper.RekeyMerge{m})
	if err != nil {
		f.t.Fatalf("merge: %v", err)
	}
	return applied[0]
}

// rekey runs rekey under the current rules until it finds nothing to do.
func (f *rekeyFixture) rekey() {
	f.t.Helper()
	for i := 0; i < 5; i++ {
		rep, err := (&crawlkeeper.Rekeyer{Store: f.s, Config: f.cur, PageSize: 2, Now: func() time.Time { return f.now }}).Run(context.Background())
		if err != nil {
			f.t.Fatalf("rekey: %v", err)
		}
		if rep.Merges == 0 && rep.Rekeyed == 0 && rep.Skipped == 0 {
			return
		}
	}
	f.t.Fatal("rekey still finds work after 5 runs")
}

// count counts the documents of collection name that match filter.
func (f *rekeyFixture) count(name string, filter bson.D) int64 {
	f.t.Helper()
	n, err := f.s.Database().Collection(name).CountDocuments(context.Background(), filter)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// settled fails if a merge left anything behind: an intent not done,
// staged documents, locks, marks or a claim noted as a merge's.
func (f *rekeyFixture) settled() {
	f.t.Helper()
	exists := bson.D{{Key: "$exists", Value: true}}
	for _, c := range []struct {
		name   string
		filter bson.D
	}{
		{"rekeys", bson.D{{Key: "phase", Value: bson.D{{Key: "$ne", Value: "done"}}}}},
		{"rekey_staged", bson.D{}},
		{"moves", bson.D{}},
		{"active", bson.D{{Key: "merging", Value: exists}}},
		{"archive", bson.D{{Key: "merging", Value: exists}}},
		{"keys", bson.D{{Key: "rekey", Value: exists}}},
	} {
		if n := f.count(c.name, c.filter); n != 0 {
			f.t.Fatalf("%d documents of %s left behind (%v)", n, c.name, c.filter)
		}
	}
}

// contents fails unless the store holds pages records and every
// acknowledged delivery exactly once, as a record's item or in its
// history, and check is clean.
func (f *rekeyFixture) contents(pages int) {
	f.t.Helper()
	ctx := context.Background()
	seen := map[int]int{}
	records := 0
	for _, archived := range []bool{false, true} {
		page, err := f.s.List(ctx, crawlkeeper.RecordQuery{Archived: archived, Limit: 1000})
		if err != nil {
			f.t.Fatal(err)
		}
		for _, r := range page.Records {
			records++
			items := [][]byte{r.Item}
			hist, err := f.s.History(ctx, r.ID)
			if err != nil {
				f.t.Fatal(err)
			}
			for _, h := range hist {
				items = append(items, h.Item)
			}
			for _, it := range items {
				var v struct{ N int }
				if err := json.Unmarshal(it, &v); err != nil {
					f.t.Fatal(err)
				}
				seen[v.N]++
			}
		}
	}
	if records != pages {
		f.t.Errorf("%d records, want %d", records, pages)
	}
	for _, n := range f.acked {
		if seen[n] != 1 {
			f.t.Errorf("acknowledged delivery %d is stored %d times", n, seen[n])
		}
	}
	mustCheck(f.t, f.s)
}

// hook runs f once, at the named step of the store's next writes.
func hook(s *mongodb.Store, step string, f func()) *bool {
	ran := false
	mongodb.SetCrashAt(s, func(name string) error {
		if name == step && !ran {
			ran = true
			f()
		}
		return nil
	})
	return &ran
}

// The two spellings of one page under the old rules, and its own under
// the current ones.
const (
	pageUTM   = "https://x.example/page?utm_source=feed"
	pageSlash = "https://x.example/page/"
	pageNew   = "https://x.example/page"
)

// TestMergeVictimChanged changes the record a merge deletes between the
// merge's check and its writes: before the record is marked, the merge
// must not apply (and leave nothing behind); once it is marked, the
// delivery must be refused, not lost. Either way a later rekey merges
// every acknowledged delivery into one record.
func TestMergeVictimChanged(t *testing.T) {
	for _, tc := range []struct {
		step    string
		applied bool
	}{
		{"merge:planned", false},
		{"merge:staged", false},
		{"merge:locked", false},
		{"merge:claimed", false},
		{"merge:marked", true},
	} {
		t.Run(tc.step, func(t *testing.T) {
			f := newRekeyFixture(t)
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			m := f.plan(a, b)
			ran := hook(f.s, tc.step, func() {
				if tc.applied {
					f.conflict(f.old, "Page", pageSlash)
				} else {
					f.deliver(f.old, "Page", pageSlash)
				}
			})
			if got := f.merge(m); got != tc.applied || !*ran {
				t.Fatalf("merge applied %v (the delivery ran: %v), want %v", got, *ran, tc.applied)
			}
			mongodb.SetCrashAt(f.s, nil)
			f.settled()
			if !tc.applied {
				if r := f.get(b); r.Version != 2 {
					t.Fatalf("record %d after the refused merge: version %d, want the delivery's 2", b, r.Version)
				}
			}
			// The refused delivery, sent again, is stored.
			f.deliver(f.old, "Page", pageSlash)
			f.rekey()
			f.settled()
			f.contents(1)
		})
	}
}

// TestIngestReadBeforeMerge runs a whole merge between the moment an
// ingest read a record of the group and the moment it writes: the ingest
// must fail (and its late history write must not overwrite the merged
// history or stay behind as an orphan), and its retry must be stored.
func TestIngestReadBeforeMerge(t *testing.T) {
	for _, target := range []string{"victim", "survivor"} {
		t.Run(target, func(t *testing.T) {
			f := newRekeyFixture(t)
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			// The survivor's second version: its first two merged history
			// entries are its first version and the victim's, so the
			// entry at its old version (2) is not what it had there.
			f.deliver(f.old, "Page", pageUTM)
			m := f.plan(a, b)
			url := pageSlash
			if target == "survivor" {
				url = pageUTM
			}
			merged := false
			ran := hook(f.s, "ingest:planned", func() {
				mongodb.SetCrashAt(f.s, nil)
				merged = f.merge(m)
			})
			if _, err := f.try(f.old, "Page", url); crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT {
				t.Fatalf("ingest of a record merged after it was read: %v, want %s", err, crawlkeeper.ECONFLICT)
			}
			if !*ran || !merged {
				t.Fatalf("the merge did not run (%v) or apply (%v)", *ran, merged)
			}
			f.contents(1) // the late entry is buried, or was refused
			f.deliver(f.old, "Page", url)
			f.rekey()
			f.settled()
			f.contents(1)
		})
	}
}

// TestMoveReadBeforeMerge runs a whole merge between the moment a move
// read a record the merge deletes and the moment it locks it: an archive
// pass of an active victim and the revival (an ingest) of an archived
// one must leave the victim merged, not bring it back.
func TestMoveReadBeforeMerge(t *testing.T) {
	for _, move := range []string{"archive", "revive"} {
		t.Run(move, func(t *testing.T) {
			f := newRekeyFixture(t)
			ctx := context.Background()
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			archive := func(id int64) []int64 {
				r := f.get(id)
				moved, err := f.s.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, f.now)
				if err != nil {
					t.Fatal(err)
				}
				return moved
			}
			if move == "revive" {
				archive(b)
			}
			m := f.plan(a, b)
			merged := false
			step := "ingest:planned"
			if move == "archive" {
				step = "archive:planned"
			}
			ran := hook(f.s, step, func() {
				mongodb.SetCrashAt(f.s, nil)
				merged = f.merge(m)
			})
			if move == "archive" {
				if moved := archive(b); len(moved) != 0 {
					t.Fatalf("archive of a record merged after it was read: moved %v", moved)
				}
			} else if _, err := f.try(f.old, "Page", pageSlash); crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT {
				t.Fatalf("revival of a record merged after it was read: %v, want %s", err, crawlkeeper.ECONFLICT)
			}
			if !*ran || !merged {
				t.Fatalf("the merge did not run (%v) or apply (%v)", *ran, merged)
			}
			if r, err := f.s.Get(ctx, b); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
				t.Fatalf("merged record %d is back: %+v %v", b, r, err)
			}
			f.settled()
			f.contents(1)
		})
	}
}

// TestMergeNewKeyTaken delivers the page under the new rules, which makes
// a record with the merge's new key, at each point of the merge: before
// the merge claimed the key, the merge must not apply and must leave no
// intent behind (the unique index would otherwise fail it on every later
// run); after, the delivery must be refused, not lost. A later rekey
// merges all, and check is clean.
func TestMergeNewKeyTaken(t *testing.T) {
	for _, tc := range []struct {
		step    string
		applied bool
	}{
		{"", false}, // before MergeRecords is called
		{"merge:planned", false},
		{"merge:staged", false},
		{"merge:locked", false},
		{"merge:claimed", true},
		{"merge:marked", true},
	} {
		name := tc.step
		if name == "" {
			name = "before"
		}
		t.Run(name, func(t *testing.T) {
			f := newRekeyFixture(t)
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			m := f.plan(a, b)
			take := func() {
				if tc.applied {
					f.conflict(f.cur, "Page", pageNew)
				} else {
					f.deliver(f.cur, "Page", pageNew)
				}
			}
			if tc.step == "" {
				take()
			} else {
				hook(f.s, tc.step, take)
			}
			if got := f.merge(m); got != tc.applied {
				t.Fatalf("merge applied %v, want %v", got, tc.applied)
			}
			mongodb.SetCrashAt(f.s, nil)
			f.settled()
			if n := f.count("rekeys", bson.D{}); !tc.applied && n != 0 {
				t.Fatalf("%d rekey intents after a merge that did not apply", n)
			}
			mustCheck(t, f.s)
			f.deliver(f.cur, "Page", pageNew)
			f.rekey()
			f.settled()
			f.contents(1)
			if r, err := f.s.GetByKey(context.Background(), m.Survivor.Key); err != nil || r.ID != a {
				t.Fatalf("the new key is held by %+v (%v), want record %d", r, err, a)
			}
		})
	}
}

// TestMergeLargeHistory merges two records whose history together passes
// MongoDB's 16 MiB document limit: the merge must apply, keep every
// version, and its intent document stay small.
func TestMergeLargeHistory(t *testing.T) {
	f := newRekeyFixture(t)
	const versions, size = 5, 2 << 20
	body := func(i int) string {
		return strings.Repeat(fmt.Sprintf("%07d ", i), size/8)
	}
	var a, b int64
	for i := 0; i < versions; i++ {
		a = f.deliver(f.old, "Page", pageUTM, "body", body(2*i))
		b = f.deliver(f.old, "Page", pageSlash, "body", body(2*i+1))
	}
	m := f.plan(a, b)
	var total int
	for _, h := range m.History {
		total += len(h.Item)
	}
	if total <= 16<<20 {
		t.Fatalf("the merged history has %d bytes: not past the 16 MiB document limit", total)
	}
	var intentSize int
	hook(f.s, "merge:committed", func() {
		raw, err := f.s.Database().Collection("rekeys").FindOne(context.Background(), bson.D{}).Raw()
		if err != nil {
			t.Error(err)
			return
		}
		intentSize = len(raw)
	})
	if !f.merge(m) {
		t.Fatal("the merge did not apply")
	}
	mongodb.SetCrashAt(f.s, nil)
	if intentSize == 0 || intentSize > 64<<10 {
		t.Fatalf("the merge's intent has %d bytes", intentSize)
	}
	r := f.get(a)
	h, err := f.s.History(context.Background(), a)
	if err != nil || len(h) != 2*versions-1 || r.Version != int64(2*versions) {
		t.Fatalf("survivor version %d with %d history entries (%v), want %d and %d", r.Version, len(h), err, 2*versions, 2*versions-1)
	}
	f.settled()
	f.contents(1)
}

// TestCrashDuringRekey stops a rekey run after each step of its key
// changes and merges, as a killed process would, then runs it again once
// the crashed run's intents are stale: the rerun rolls a committed merge
// forward and a planned one back (and merges it anew), and the store ends
// with every pair merged, every version kept and Check passing. Check
// right after the crash passes too.
func TestCrashDuringRekey(t *testing.T) {
	ctx := context.Background()
	old := oldRules(t)
	steps := []string{"rekey:intent", "rekey:claimed", "rekey:updated",
		"merge:planned", "merge:staged", "merge:locked", "merge:claimed", "merge:marked", "merge:committed",
		"merge:history", "merge:victims", "merge:survivor", "merge:keys", "merge:old history", "merge:journal", "merge:unlocked", "merge:done"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			s := testdb.MustOpen(t, testdb.MongoURL(t), mongodb.Open)
			t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			var items []*crawlkeeper.Prepared
			for i := range 3 {
				for j, u := range []string{"https://x.example/%d/?utm_source=a", "https://x.example/%d"} {
					b, _ := json.Marshal(map[string]any{"_source": "s", "title": fmt.Sprintf("T%d", i), "url": fmt.Sprintf(u, i), "n": j})
					p, err := (&crawlkeeper.Preparer{Config: old}).Prepare(b, 1, crawlkeeper.Meta{}, t0)
					if err != nil {
						t.Fatal(err)
					}
					items = append(items, p)
				}
			}
			// Records that only get a new key (no merge): the steps of key
			// changes.
			for i := range 2 {
				b, _ := json.Marshal(map[string]any{"_source": "s", "title": fmt.Sprintf("Solo %d", i), "url": fmt.Sprintf("https://x.example/solo/%d/", i)})
				p, err := (&crawlkeeper.Preparer{Config: old}).Prepare(b, 1, crawlkeeper.Meta{}, t0)
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, p)
			}
			for i, p := range items {
				if _, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			crashed := false
			mongodb.SetCrashAt(s, func(name string) error {
				if name == step && !crashed {
					crashed = true
					return errCrash
				}
				return nil
			})
			run := func() (*crawlkeeper.RekeyReport, error) {
				return (&crawlkeeper.Rekeyer{Store: s, Config: &crawlkeeper.Config{}, PageSize: 2}).Run(ctx)
			}
			if _, err := run(); !errors.Is(err, errCrash) || !crashed {
				t.Fatalf("the run did not stop at %s (err %v)", step, err)
			}
			mongodb.SetCrashAt(s, nil)
			mustCheck(t, s)
			// The crashed run's intents are stale for the rerun.
			later := time.Now().Add(2 * time.Minute)
			mongodb.SetClock(s, func() time.Time { return later })
			if _, err := run(); err != nil {
				t.Fatal(err)
			}
			mustCheck(t, s)
			st, err := s.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Active != 5 || st.History != 3 {
				t.Fatalf("after the rerun: %d active records with %d history entries, want 5 and 3", st.Active, st.History)
			}
			j, err := s.Journal(ctx, crawlkeeper.RekeyJournal, 10)
			if err != nil || len(j) != 3 {
				t.Fatalf("%d merges journaled (%v), want 3", len(j), err)
			}
			again, err := run()
			if err != nil || again.Merges != 0 || again.Rekeyed != 0 {
				t.Fatalf("a third run: %+v %v", again, err)
			}
			f := &rekeyFixture{t: t, s: s}
			f.settled()
		})
	}
}

// TestCrashDuringMergeRollback stops a merge's rollback (a record of the
// group changed before it was marked) after each of its steps. An ingest
// that meets the half rolled back merge finishes the rollback and is
// stored; the repair leaves nothing behind, and a later rekey merges.
func TestCrashDuringMergeRollback(t *testing.T) {
	for _, step := range []string{"merge:aborting", "merge:unmarked", "merge:released"} {
		t.Run(step, func(t *testing.T) {
			f := newRekeyFixture(t)
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			m := f.plan(a, b)
			changed, crashed := false, false
			mongodb.SetCrashAt(f.s, func(name string) error {
				switch {
				case name == "merge:claimed" && !changed:
					changed = true
					f.deliver(f.old, "Page", pageSlash)
				case name == step && !crashed:
					crashed = true
					return errCrash
				}
				return nil
			})
			if _, err := f.s.MergeRecords(context.Background(), []*crawlkeeper.RekeyMerge{m}); !errors.Is(err, errCrash) || !changed {
				t.Fatalf("merge: %v (the record changed: %v), want the simulated crash in the rollback", err, changed)
			}
			mongodb.SetCrashAt(f.s, nil)
			mustCheck(t, f.s)
			f.deliver(f.old, "Page", pageUTM)
			f.deliver(f.old, "Page", pageSlash)
			if err := mongodb.RepairAll(f.s); err != nil {
				t.Fatal(err)
			}
			f.settled()
			f.rekey()
			f.settled()
			f.contents(1)
		})
	}
}

// TestIngestSettlesCrashedMerge delivers to a page whose merge crashed: a
// committed merge whose survivor is still marked is rolled forward by the
// ingest, which is then stored on the survivor (once the survivor is
// written, the delivery simply updates it, and the repair finishes the
// rest); a planned one blocks the delivery (ECONFLICT) until it is stale,
// and is then rolled back by the ingest.
func TestIngestSettlesCrashedMerge(t *testing.T) {
	for _, tc := range []struct {
		step      string
		committed bool
		// marked: the survivor still carries the merge's mark.
		marked bool
	}{
		{"merge:marked", false, true},
		{"merge:committed", true, true},
		{"merge:victims", true, true},
		{"merge:survivor", true, false},
	} {
		t.Run(tc.step, func(t *testing.T) {
			f := newRekeyFixture(t)
			a := f.deliver(f.old, "Page", pageUTM)
			b := f.deliver(f.old, "Page", pageSlash)
			m := f.plan(a, b)
			mongodb.SetCrashAt(f.s, func(name string) error {
				if name == tc.step {
					return errCrash
				}
				return nil
			})
			if _, err := f.s.MergeRecords(context.Background(), []*crawlkeeper.RekeyMerge{m}); !errors.Is(err, errCrash) {
				t.Fatalf("merge: %v, want the simulated crash", err)
			}
			mongodb.SetCrashAt(f.s, nil)
			if tc.committed {
				if id := f.deliver(f.cur, "Page", pageNew); id != a {
					t.Fatalf("the delivery went to record %d, want the survivor %d", id, a)
				}
				if tc.marked {
					f.settled() // rolled forward by the ingest
				}
				f.contents(1)
				f.settled()
				return
			}
			f.conflict(f.cur, "Page", pageNew)
			f.conflict(f.old, "Page", pageSlash)
			later := time.Now().Add(2 * time.Minute)
			mongodb.SetClock(f.s, func() time.Time { return later })
			f.deliver(f.old, "Page", pageSlash)
			if id := f.deliver(f.cur, "Page", pageNew); id == a || id == b {
				t.Fatalf("the new-rule delivery went to record %d of the rolled back merge", id)
			}
			f.settled()
			f.rekey()
			f.contents(1)
		})
	}
}

// TestOldMergeIntent leaves a merge intent as the version before phases
// wrote it (the merge inside the intent): the store still opens and
// ingests, and rekey and check say how to finish it.
func TestOldMergeIntent(t *testing.T) {
	ctx := context.Background()
	u := testdb.MongoURL(t)
	s := openCrash(t, u)
	if _, err := s.Database().Collection("rekeys").InsertOne(ctx, bson.D{{Key: "_id", Value: "merge:1"}, {Key: "kind", Value: "merge"},
		{Key: "at", Value: time.Now().UnixMicro()}, {Key: "group", Value: bson.A{int64(1), int64(2)}}}); err != nil {
		t.Fatal(err)
	}
	s2 := openCrash(t, u)
	f := &rekeyFixture{t: t, s: s2, old: oldRules(t), cur: &crawlkeeper.Config{}, now: time.Now()}
	f.deliver(f.old, "Page", pageUTM)
	if _, err := s2.Check(ctx); err == nil || !strings.Contains(err.Error(), "older crawlkeeper") {
		t.Fatalf("check with an old merge intent: %v", err)
	}
	if _, err := s2.MergeRecords(ctx, []*crawlkeeper.RekeyMerge{f.plan(1)}); err == nil || !strings.Contains(err.Error(), "crawlkeeper check") {
		t.Fatalf("merge with an old merge intent: %v", err)
	}
}

// TestLaggingRollForward lets another process finish a committed merge,
// and a delivery update the survivor, while the merge's own process is
// stopped at each step of its roll-forward: when it goes on, it must
// neither fail nor undo the delivery.
func TestLaggingRollForward(t *testing.T) {
	for _, step := range []string{"merge:committed", "merge:history", "merge:victims", "merge:survivor", "merge:keys", "merge:old history", "merge:journal", "merge:unlocked"} {
		t.Run(step, func(t *testing.T) {
			for _, archived := range []bool{false, true} {
				f := newRekeyFixture(t)
				ctx := context.Background()
				a := f.deliver(f.old, "Page", pageUTM)
				b := f.deliver(f.old, "Page", pageSlash)
				if archived {
					// The survivor moves from the archive to active.
					r := f.get(a)
					if moved, err := f.s.Archive(ctx, []crawlkeeper.Move{{ID: a, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, f.now); err != nil || len(moved) != 1 {
						t.Fatalf("archive: %v %v", moved, err)
					}
				}
				m := f.plan(a, b)
				var last int
				ran := hook(f.s, step, func() {
					if err := mongodb.RepairAll(f.s); err != nil {
						t.Fatal(err)
					}
					if id := f.deliver(f.cur, "Page", pageNew); id != a {
						t.Fatalf("the delivery went to record %d, want the survivor %d", id, a)
					}
					last = f.n
				})
				if !f.merge(m) || !*ran {
					t.Fatalf("merge not applied, or not stopped at %s", step)
				}
				mongodb.SetCrashAt(f.s, nil)
				if r := f.get(a); !strings.Contains(string(r.Item), fmt.Sprintf(`"n":%d`, last)) || r.Archived() {
					t.Fatalf("survivor after the lagging roll-forward: archived %v, item %s; want delivery %d", r.Archived(), r.Item, last)
				}
				f.settled()
				f.contents(1)
			}
		})
	}
}

// TestLeftOverMergeState leaves what a process writes when it goes on
// planning a merge after its intent was rolled back for it, then stops: a
// mark, a merge's key claim, a lock and a staged document, all of an
// intent that no longer exists. Deliveries must not be blocked by them,
// and check and the repair must clear them.
func TestLeftOverMergeState(t *testing.T) {
	f := newRekeyFixture(t)
	ctx := context.Background()
	db := f.s.Database()
	a := f.deliver(f.old, "Page", pageUTM)
	b := f.deliver(f.old, "Page", pageSlash)
	key := f.plan(a, b).Survivor.Key
	const gone = "merge:1:gone"
	for _, w := range []struct {
		c   string
		err error
	}{
		{"rekey_staged", func() error {
			_, err := db.Collection("rekey_staged").InsertOne(ctx, bson.D{{Key: "_id", Value: gone + ":s"}, {Key: "intent", Value: gone}, {Key: "n", Value: -1}})
			return err
		}()},
		{"active", func() error {
			_, err := db.Collection("active").UpdateOne(ctx, bson.D{{Key: "_id", Value: a}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "merging", Value: gone}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
			return err
		}()},
		{"moves", func() error {
			_, err := db.Collection("moves").InsertOne(ctx, bson.D{{Key: "_id", Value: b}, {Key: "to", Value: "rekey"}, {Key: "at", Value: time.Now().Add(-time.Hour).UnixMicro()}, {Key: "rekey", Value: gone}})
			return err
		}()},
		{"keys", func() error {
			_, err := db.Collection("keys").InsertOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "id", Value: a}, {Key: "rekey", Value: gone}})
			return err
		}()},
	} {
		if w.err != nil {
			t.Fatalf("%s: %v", w.c, w.err)
		}
	}
	// A delivery of the new key, and one to the marked record.
	c := f.deliver(f.cur, "Page", pageNew)
	if id := f.deliver(f.old, "Page", pageUTM); id != a {
		t.Fatalf("the delivery to record %d went to %d", a, id)
	}
	mustCheck(t, f.s)
	if err := mongodb.RepairAll(f.s); err != nil {
		t.Fatal(err)
	}
	f.settled()
	f.rekey()
	f.contents(1)
	if r, err := f.s.GetByKey(ctx, key); err != nil || r.ID != a {
		t.Fatalf("key %s: %+v %v, want record %d (merged with %d)", key, r, err, a, c)
	}
}
