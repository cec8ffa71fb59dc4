package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
)

// RekeyBackend is a store with every role a rekey run and its checks use.
type RekeyBackend interface {
	crawlkeeper.RekeyBackend
	crawlkeeper.ArchiveStore
}

// oldKeyRules are the rules the suite's records are first keyed under:
// URLs and titles compared as sent, as before canonical keys.
const oldKeyRules = `
defaults:
  key_rules:
    url: {canonical: false}
    title: {fold: false}
`

// rekeyPairs are pairs of deliveries (title, url) stored as two records
// under oldKeyRules; sameRecord says whether the current default rules
// merge them.
var rekeyPairs = []keyPair{
	{"UTM", "jobs", [2]string{"Open Day", "https://uni.example/events/open-day?utm_source=twitter&utm_medium=social"}, [2]string{"Open Day", "https://uni.example/events/open-day"}, true},
	{"Fbclid", "jobs", [2]string{"Fair", "https://uni.example/fair?fbclid=IwAR0"}, [2]string{"Fair", "https://uni.example/fair"}, true},
	{"TrailingSlash", "jobs", [2]string{"Tour", "https://uni.example/events/tour/"}, [2]string{"Tour", "https://uni.example/events/tour"}, true},
	{"ParamOrder", "jobs", [2]string{"List", "https://jobs.example/list?page=2&sort=new"}, [2]string{"List", "https://jobs.example/list?sort=new&page=2"}, true},
	{"TitleCase", "jobs", [2]string{"Data Engineer", "https://jobs.example/1"}, [2]string{"DATA ENGINEER", "https://jobs.example/1"}, true},
	{"ID", "jobs", [2]string{"View", "https://jobs.example/view?id=1"}, [2]string{"View", "https://jobs.example/view?id=2"}, false},
	{"Page", "jobs", [2]string{"Page", "https://jobs.example/p?page=1"}, [2]string{"Page", "https://jobs.example/p?page=2"}, false},
	{"Path", "jobs", [2]string{"Path", "https://jobs.example/a/1"}, [2]string{"Path", "https://jobs.example/a/2"}, false},
	{"Host", "jobs", [2]string{"Host", "https://a.example/x"}, [2]string{"Host", "https://b.example/x"}, false},
	{"OtherSource", "news", [2]string{"Fair", "https://uni.example/fair?fbclid=IwAR0"}, [2]string{"Fair", "https://uni.example/fair"}, true},
}

// RunRekey runs the conformance tests of crawlkeeper.RekeyStore through a
// rekey run (crawlkeeper.Rekeyer): records stored under older key rules
// are re-keyed, colliding ones merged (active with active, active with
// archived, archived with archived) with every version kept, conditions
// respected, and a second run changes nothing.
func RunRekey(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	t.Run("Pairs", func(t *testing.T) { testRekeyPairs(t, open) })
	t.Run("History", func(t *testing.T) { testRekeyHistory(t, open) })
	t.Run("Archive", func(t *testing.T) { testRekeyArchive(t, open) })
	t.Run("Chain", func(t *testing.T) { testRekeyChain(t, open) })
	t.Run("Conditions", func(t *testing.T) { testRekeyConditions(t, open) })
	t.Run("Sources", func(t *testing.T) { testRekeySources(t, open) })
	t.Run("WhileIngesting", func(t *testing.T) { testRekeyWhileIngesting(t, open) })
}

// rekeyEnv is a store with records keyed under oldKeyRules.
type rekeyEnv struct {
	*Env[RekeyBackend]
	old, cur *crawlkeeper.Config
}

func newRekeyEnv(t *testing.T, open func(tb testing.TB) RekeyBackend) *rekeyEnv {
	e := NewEnv(t, open)
	old, err := config.Parse([]byte(oldKeyRules))
	ok(t, err)
	e.Config = old
	return &rekeyEnv{Env: e, old: old, cur: &crawlkeeper.Config{}}
}

// deliver ingests one item under the old rules at time at.
func (e *rekeyEnv) deliver(at time.Time, source, title, url string, extra ...string) int64 {
	e.TB.Helper()
	e.Now = at
	m := map[string]any{"_source": source, "title": title, "url": url}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	return e.Ingest(string(b)).IDs[0]
}

// rekey runs a rekey under the current (default) rules.
func (e *rekeyEnv) rekey(dry bool) *crawlkeeper.RekeyReport {
	e.TB.Helper()
	k := &crawlkeeper.Rekeyer{Store: e.Store, Config: e.cur, DryRun: dry, PageSize: 3, Now: func() time.Time { return T0.Add(1000 * time.Hour) }}
	rep, err := k.Run(context.Background())
	if err != nil {
		e.TB.Fatalf("rekey: %v", err)
	}
	return rep
}

// gone fails unless id is neither active nor archived.
func (e *rekeyEnv) gone(id int64) {
	e.TB.Helper()
	if r, err := e.Store.Get(context.Background(), id); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
		e.TB.Fatalf("record %d after the merge: %+v %v, want not found", id, r, err)
	}
}

func (e *rekeyEnv) history(id int64) []crawlkeeper.HistoryEntry {
	e.TB.Helper()
	h, err := e.Store.History(context.Background(), id)
	ok(e.TB, err)
	return h
}

func testRekeyPairs(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ctx := context.Background()
	type ids struct{ a, b int64 }
	got := map[string]ids{}
	for i, p := range rekeyPairs {
		a := e.deliver(T0.Add(time.Duration(i)*time.Minute), p.source, p.a[0], p.a[1], "pair", p.name, "_round", "1", "_target", "site-a")
		b := e.deliver(T0.Add(time.Hour+time.Duration(i)*time.Minute), p.source, p.b[0], p.b[1], "pair", p.name, "_round", "2")
		if a == b {
			t.Fatalf("%s: the old rules stored one record; the pair tests nothing", p.name)
		}
		got[p.name] = ids{a, b}
	}
	merges := 0
	for _, p := range rekeyPairs {
		if p.sameRecord {
			merges++
		}
	}

	dry := e.rekey(true)
	if !dry.DryRun || dry.Merges != int64(merges) || dry.Merged != int64(merges) {
		t.Fatalf("dry run: %+v, want %d merges", dry, merges)
	}
	for _, p := range rekeyPairs {
		e.MustGet(got[p.name].a)
		e.MustGet(got[p.name].b)
	}
	if fp, _ := crawlkeeper.StoredKeyRules(ctx, e.Store, "jobs"); fp == mustFingerprint(t, e.cur, "jobs") {
		t.Fatal("a dry run recorded the new fingerprint")
	}

	rep := e.rekey(false)
	if rep.Merges != int64(merges) || rep.Merged != int64(merges) || rep.Skipped != 0 || rep.Scanned != int64(2*len(rekeyPairs)) {
		t.Fatalf("rekey: %+v, want %d merges of %d records", rep, merges, 2*len(rekeyPairs))
	}
	for _, p := range rekeyPairs {
		id := got[p.name]
		a := e.MustGet(id.a)
		prepared := e.prepareCur(p.source, p.a[0], p.a[1])
		if a.Key != prepared.Key {
			t.Errorf("%s: survivor key %s, ingest under the current rules builds %s", p.name, a.Key, prepared.Key)
		}
		if !p.sameRecord {
			b := e.MustGet(id.b)
			if b.Key == a.Key {
				t.Errorf("%s: both records have key %s", p.name, a.Key)
			}
			continue
		}
		e.gone(id.b)
		// The survivor: the first id and crawled_at, the last delivery,
		// the newest content, and the other content in its history.
		if !a.CrawledAt.Equal(T0.Add(time.Duration(indexOf(p.name))*time.Minute)) || !a.LastUpdatedAt.Equal(T0.Add(time.Hour+time.Duration(indexOf(p.name))*time.Minute)) {
			t.Errorf("%s: survivor crawled_at %s last_updated_at %s", p.name, a.CrawledAt, a.LastUpdatedAt)
		}
		// The round of the last delivery, and the target of the last
		// delivery that carried one.
		if a.LastRound != "2" || a.LastTarget != "site-a" {
			t.Errorf("%s: survivor round %q target %q, want 2 and site-a", p.name, a.LastRound, a.LastTarget)
		}
		if !strings.Contains(string(a.Item), jsonText(p.b[1])) {
			t.Errorf("%s: survivor item %s, want the newest delivery (%s)", p.name, a.Item, p.b[1])
		}
		h := e.history(id.a)
		if len(h) != 1 || !strings.Contains(string(h[0].Item), jsonText(p.a[1])) || h[0].Version != a.Version-1 {
			t.Errorf("%s: survivor (version %d) history %+v, want the first delivery", p.name, a.Version, h)
		}
		// A delivery under the current rules now updates the survivor.
		res, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{e.prepareCur(p.source, p.a[0], p.a[1], "pair", p.name)}, Now: T0.Add(2 * time.Hour)})
		ok(t, err)
		if res.IDs[0] != id.a || res.Outcomes[0] == crawlkeeper.OutcomeInserted {
			t.Errorf("%s: a delivery after the rekey went to record %d (%s), want %d", p.name, res.IDs[0], res.Outcomes[0], id.a)
		}
	}
	for _, src := range []string{"jobs", "news"} {
		if fp, _ := crawlkeeper.StoredKeyRules(ctx, e.Store, src); fp != mustFingerprint(t, e.cur, src) || rep.Fingerprints[src] != fp {
			t.Errorf("source %s: stored fingerprint %q, reported %q", src, fp, rep.Fingerprints[src])
		}
	}
	j, err := e.Store.Journal(ctx, crawlkeeper.RekeyJournal, 100)
	ok(t, err)
	if len(j) != merges {
		t.Errorf("%d merges journaled, want %d", len(j), merges)
	}
	var entry crawlkeeper.MergeJournalEntry
	if len(j) > 0 {
		ok(t, json.Unmarshal(j[0].Body, &entry))
		if entry.Survivor == 0 || len(entry.Merged) != 1 || len(entry.OldKeys) != 2 || entry.Key == "" {
			t.Errorf("journal entry %s", j[0].Body)
		}
	}
	if runs, err := e.Store.Journal(ctx, crawlkeeper.RekeyRunJournal, 10); err != nil || len(runs) != 1 {
		t.Errorf("run journal: %d entries, %v", len(runs), err)
	}
	e.MustCheck()

	again := e.rekey(false)
	if again.Merges != 0 || again.Rekeyed != 0 || again.Skipped != 0 {
		t.Fatalf("a second rekey changed things: %+v", again)
	}
	e.MustCheck()
}

func indexOf(name string) int {
	for i, p := range rekeyPairs {
		if p.name == name {
			return i
		}
	}
	return -1
}

// jsonText returns s as a JSON string the way stored items write it
// (without HTML escaping).
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSpace(b.String())
}

func mustFingerprint(t *testing.T, cfg *crawlkeeper.Config, source string) string {
	fp, err := crawlkeeper.KeyRulesFingerprint(cfg, source)
	ok(t, err)
	return fp
}

// prepareCur prepares an item under the current rules.
func (e *rekeyEnv) prepareCur(source, title, url string, extra ...string) *crawlkeeper.Prepared {
	e.TB.Helper()
	m := map[string]any{"_source": source, "title": title, "url": url}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	p, err := (&crawlkeeper.Preparer{Config: e.cur}).Prepare(b, 1, crawlkeeper.Meta{}, e.Now)
	ok(e.TB, err)
	return p
}

// testRekeyHistory merges two records that both changed: every version
// of both ends up in the survivor's history, in time order.
func testRekeyHistory(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	u1, u2 := "https://h.example/post?utm_source=a", "https://h.example/post"
	a := e.deliver(T0, "s", "Post", u1, "body", "a1")
	b := e.deliver(T0.Add(time.Hour), "s", "Post", u2, "body", "b1")
	e.deliver(T0.Add(2*time.Hour), "s", "Post", u1, "body", "a2")
	e.deliver(T0.Add(3*time.Hour), "s", "Post", u2, "body", "b2")
	e.deliver(T0.Add(4*time.Hour), "s", "Post", u1, "body", "a3")
	// b is delivered last, unchanged: the newest content is a's.
	e.deliver(T0.Add(5*time.Hour), "s", "Post", u2, "body", "b2")
	rep := e.rekey(false)
	if rep.Merges != 1 {
		t.Fatalf("rekey: %+v", rep)
	}
	e.gone(b)
	r := e.MustGet(a)
	if !strings.Contains(string(r.Item), `"a3"`) || !r.CrawledAt.Equal(T0) || !r.LastUpdatedAt.Equal(T0.Add(5*time.Hour)) || !r.LastChangedAt.Equal(T0.Add(4*time.Hour)) {
		t.Fatalf("survivor: %+v", r)
	}
	h := e.history(a)
	var bodies []string
	for i, x := range h {
		var it struct{ Body string }
		ok(t, json.Unmarshal(x.Item, &it))
		bodies = append(bodies, it.Body)
		if x.Version != r.Version-int64(len(h)-i) {
			t.Errorf("history entry %d has version %d; survivor version %d, %d entries", i, x.Version, r.Version, len(h))
		}
	}
	if strings.Join(bodies, ",") != "a1,b1,a2,b2" {
		t.Fatalf("survivor history %v, want a1,b1,a2,b2", bodies)
	}
	e.MustCheck()
}

// testRekeyArchive merges across the active set and the archive.
func testRekeyArchive(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ctx := context.Background()
	archive := func(id int64) {
		t.Helper()
		r := e.MustGet(id)
		moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, T0.Add(10*time.Hour))
		ok(t, err)
		if len(moved) != 1 {
			t.Fatalf("archive %d: moved %v", id, moved)
		}
	}
	// Active first, archived second: the survivor (first id) is active.
	a1 := e.deliver(T0, "s", "One", "https://x.example/1/")
	a2 := e.deliver(T0.Add(time.Hour), "s", "One", "https://x.example/1")
	archive(a2)
	// Archived first, active second: the survivor keeps the archived
	// record's id and becomes active.
	b1 := e.deliver(T0, "s", "Two", "https://x.example/2/")
	b2 := e.deliver(T0.Add(time.Hour), "s", "Two", "https://x.example/2")
	archive(b1)
	// Both archived: the survivor stays archived.
	c1 := e.deliver(T0, "s", "Three", "https://x.example/3/")
	c2 := e.deliver(T0.Add(time.Hour), "s", "Three", "https://x.example/3")
	archive(c1)
	archive(c2)
	rep := e.rekey(false)
	if rep.Merges != 3 {
		t.Fatalf("rekey: %+v", rep)
	}
	for _, c := range []struct {
		keep, gone int64
		archived   bool
	}{{a1, a2, false}, {b1, b2, false}, {c1, c2, true}} {
		e.gone(c.gone)
		r := e.MustGet(c.keep)
		if r.Archived() != c.archived {
			t.Errorf("survivor %d: archived %v, want %v", c.keep, r.Archived(), c.archived)
		}
		if c.archived && (r.ArchiveReason != crawlkeeper.ReasonManual || r.ArchivedAt == nil) {
			t.Errorf("survivor %d: archived at %v for %q", c.keep, r.ArchivedAt, r.ArchiveReason)
		}
		if h := e.history(c.keep); len(h) != 1 {
			t.Errorf("survivor %d: %d history entries, want 1", c.keep, len(h))
		}
	}
	page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Archived: true, Limit: 10})
	ok(t, err)
	if len(page.Records) != 1 || page.Records[0].ID != c1 {
		t.Errorf("archive after the rekey: %d records", len(page.Records))
	}
	e.MustCheck()
	if again := e.rekey(false); again.Merges != 0 || again.Rekeyed != 0 {
		t.Fatalf("second rekey: %+v", again)
	}
}

// testRekeyChain re-keys a record onto the key another record holds
// before that one is re-keyed itself, and merges three records into one.
func testRekeyChain(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ids := []int64{
		e.deliver(T0, "s", "Job", "https://x.example/job?utm_source=a"),
		e.deliver(T0.Add(time.Minute), "s", "JOB", "https://x.example/job"),
		e.deliver(T0.Add(2*time.Minute), "s", "job", "https://x.example/job/?fbclid=1"),
	}
	other := e.deliver(T0.Add(3*time.Minute), "s", "Job", "https://x.example/job?id=7")
	rep := e.rekey(false)
	if rep.Merges != 2 || rep.Merged != 2 {
		t.Fatalf("rekey: %+v", rep)
	}
	r := e.MustGet(ids[0])
	e.gone(ids[1])
	e.gone(ids[2])
	e.MustGet(other)
	if h := e.history(ids[0]); len(h) != 2 || r.Version != 3 {
		t.Fatalf("survivor version %d with %d history entries, want 3 and 2", r.Version, len(h))
	}
	e.MustCheck()
}

// testRekeyConditions checks that the store applies a merge or a key change
// only to records still in the state it was decided on.
func testRekeyConditions(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ctx := context.Background()
	a := e.deliver(T0, "s", "Cond", "https://x.example/c/")
	b := e.deliver(T0.Add(time.Hour), "s", "Cond", "https://x.example/c")
	ra, rb := e.MustGet(a), e.MustGet(b)
	p := e.prepareCur("s", "Cond", "https://x.example/c")
	m := crawlkeeper.PlanRekeyMerge([]*crawlkeeper.Record{ra, rb}, nil, p.Key, p.KeyParts, T0)
	// b is re-crawled after the decision.
	e.deliver(T0.Add(2*time.Hour), "s", "Cond", "https://x.example/c")
	applied, err := e.Store.MergeRecords(ctx, []*crawlkeeper.RekeyMerge{m})
	ok(t, err)
	if len(applied) != 1 || applied[0] {
		t.Fatalf("a merge was applied to a record re-crawled after the decision (%v)", applied)
	}
	e.MustGet(a)
	e.MustGet(b)
	done, err := e.Store.RewriteKeys(ctx, []crawlkeeper.KeyChange{{State: crawlkeeper.StateOf(rb), Key: "stale", KeyParts: []string{"x=stale"}}})
	ok(t, err)
	if len(done) != 0 {
		t.Fatal("a key change was applied to a record re-crawled after the decision")
	}
	// A key another record holds, active or archived, is left out.
	ra = e.MustGet(a)
	rb = e.MustGet(b)
	done, err = e.Store.RewriteKeys(ctx, []crawlkeeper.KeyChange{{State: crawlkeeper.StateOf(rb), Key: ra.Key, KeyParts: ra.KeyParts}})
	ok(t, err)
	if len(done) != 0 {
		t.Fatalf("record %d was given the key of record %d", b, a)
	}
	if got := e.MustGet(b); got.Key != rb.Key {
		t.Fatalf("record %d got key %s from a rewrite left out", b, got.Key)
	}
	held := e.deliver(T0, "s", "Held", "https://x.example/held")
	moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: held, Version: 1, LastUpdatedAt: T0, Reason: crawlkeeper.ReasonManual}}, T0.Add(time.Hour))
	ok(t, err)
	if len(moved) != 1 {
		t.Fatalf("archive %d: moved %v", held, moved)
	}
	rh := e.MustGet(held)
	if done, err = e.Store.RewriteKeys(ctx, []crawlkeeper.KeyChange{{State: crawlkeeper.StateOf(rb), Key: rh.Key, KeyParts: rh.KeyParts}}); err != nil || len(done) != 0 {
		t.Fatalf("rewriting an active record to the key of archived record %d: done %v, %v", held, done, err)
	}
	// A merge whose key a record outside the group holds is left out too,
	// whichever table the survivor or the holder is in (a delivery under
	// the new rules made it after the merge was decided).
	x1 := e.deliver(T0, "s", "Taken", "https://x.example/t1")
	x2 := e.deliver(T0, "s", "Taken", "https://x.example/t2")
	for _, id := range []int64{x1, x2} {
		r := e.MustGet(id)
		moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: id, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, T0.Add(time.Hour))
		ok(t, err)
		if len(moved) != 1 {
			t.Fatalf("archive %d: moved %v", id, moved)
		}
	}
	taker := e.deliver(T0.Add(2*time.Hour), "s", "Taken", "https://x.example/t")
	rt := e.MustGet(taker)
	taken := crawlkeeper.PlanRekeyMerge([]*crawlkeeper.Record{e.MustGet(x1), e.MustGet(x2)}, nil, rt.Key, rt.KeyParts, T0)
	applied, err = e.Store.MergeRecords(ctx, []*crawlkeeper.RekeyMerge{taken})
	ok(t, err)
	if len(applied) != 1 || applied[0] {
		t.Fatalf("two archived records were merged onto the key of active record %d (%v)", taker, applied)
	}
	e.MustGet(x1)
	e.MustGet(x2)
	e.MustCheck()
	// In the state it was read in, the merge applies; in one call with a
	// merge whose group changed since, only that one is left out.
	c := e.deliver(T0, "s", "Other", "https://x.example/o/")
	d := e.deliver(T0.Add(time.Hour), "s", "Other", "https://x.example/o")
	po := e.prepareCur("s", "Other", "https://x.example/o")
	stale := crawlkeeper.PlanRekeyMerge([]*crawlkeeper.Record{e.MustGet(c), e.MustGet(d)}, nil, po.Key, po.KeyParts, T0)
	e.deliver(T0.Add(3*time.Hour), "s", "Other", "https://x.example/o/")
	ra, rb = e.MustGet(a), e.MustGet(b)
	m = crawlkeeper.PlanRekeyMerge([]*crawlkeeper.Record{ra, rb}, nil, p.Key, p.KeyParts, T0)
	applied, err = e.Store.MergeRecords(ctx, []*crawlkeeper.RekeyMerge{stale, m})
	ok(t, err)
	if len(applied) != 2 || applied[0] || !applied[1] {
		t.Fatalf("merges applied %v, want [false true]", applied)
	}
	e.MustGet(c)
	e.MustGet(d)
	e.gone(b)
	if r := e.MustGet(a); r.Key != p.Key {
		t.Fatalf("survivor key %s, want %s", r.Key, p.Key)
	}
	e.MustCheck()
}

// testDeliveries checks the persistent delivery counters: every item
// delivered counts, and every item that did not insert a record (a
// re-crawl, or a repeat within its batch) counts as a duplicate.
func testDeliveries(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	ctx := context.Background()
	st, err := e.Store.Stats(ctx)
	ok(t, err)
	if st.Deliveries != 0 || st.DuplicateDeliveries != 0 || st.DuplicateRate != 0 {
		t.Fatalf("an empty store has deliveries: %+v", st)
	}
	a1 := `{"_source":"a","title":"One","url":"https://d.example/1"}`
	a2 := `{"_source":"a","title":"Two","url":"https://d.example/2"}`
	e.Ingest(a1, a2, a1)
	e.Now = T0.Add(time.Hour)
	e.Ingest(`{"_source":"a","title":"ONE","url":"https://d.example/1?utm_source=x"}`, `{"_source":"b","title":"B","url":"https://d.example/b"}`)
	st, err = e.Store.Stats(ctx)
	ok(t, err)
	a, b := st.Sources["a"], st.Sources["b"]
	if a == nil || b == nil {
		t.Fatalf("stats sources %v", st.Sources)
	}
	if a.Deliveries != 4 || a.DuplicateDeliveries != 2 || b.Deliveries != 1 || b.DuplicateDeliveries != 0 {
		t.Fatalf("deliveries: a %d (%d duplicates), b %d (%d duplicates); want 4 (2) and 1 (0)", a.Deliveries, a.DuplicateDeliveries, b.Deliveries, b.DuplicateDeliveries)
	}
	if st.Deliveries != 5 || st.DuplicateDeliveries != 2 || a.DuplicateRate != 0.5 || st.DuplicateRate != 0.4 {
		t.Fatalf("totals: %d deliveries, %d duplicates, rates %v and %v", st.Deliveries, st.DuplicateDeliveries, a.DuplicateRate, st.DuplicateRate)
	}
	if st.Active != 3 {
		t.Fatalf("%d records, want 3", st.Active)
	}
}

// rekeySources are source names that are each a source of their own: the
// empty name, and names that differ only in letter case or white space.
var rekeySources = []string{"", "s1", "S1", " s1", "s1 "}

// testRekeySources checks that a merge never crosses sources: the same
// pair of deliveries under each of rekeySources is merged within its
// source only, whether the run covers every source or one of them (the
// empty name included), and a merge built across sources is refused.
func testRekeySources(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ctx := context.Background()
	ids := map[string][2]int64{}
	for i, src := range rekeySources {
		at := T0.Add(time.Duration(i) * time.Minute)
		a := e.deliver(at, src, "Open Day", "https://uni.example/open-day?utm_source=x")
		b := e.deliver(at.Add(time.Hour), src, "Open Day", "https://uni.example/open-day")
		ids[src] = [2]int64{a, b}
	}
	count := func(src string) int {
		t.Helper()
		page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Source: src, ExactSource: true, Limit: 100})
		ok(t, err)
		for _, r := range page.Records {
			if r.Source != src {
				t.Fatalf("listing source %q returned record %d of source %q", src, r.ID, r.Source)
			}
		}
		return len(page.Records)
	}
	for _, src := range rekeySources {
		if n := count(src); n != 2 {
			t.Fatalf("source %q lists %d records, want 2", src, n)
		}
	}

	// A merge built across sources is refused before anything is written.
	a, b := e.MustGet(ids[""][0]), e.MustGet(ids["s1"][1])
	cross := crawlkeeper.PlanRekeyMerge([]*crawlkeeper.Record{a, b}, nil, a.Key, a.KeyParts, T0)
	if _, err := e.Store.MergeRecords(ctx, []*crawlkeeper.RekeyMerge{cross}); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Fatalf("a merge across sources: %v, want %s", err, crawlkeeper.EINVALID)
	}
	e.MustGet(a.ID)
	e.MustGet(b.ID)

	run := func(dry bool, sources []string) *crawlkeeper.RekeyReport {
		t.Helper()
		k := &crawlkeeper.Rekeyer{Store: e.Store, Config: e.cur, Sources: sources, DryRun: dry, PageSize: 3, Now: func() time.Time { return T0.Add(1000 * time.Hour) }}
		rep, err := k.Run(ctx)
		ok(t, err)
		return rep
	}
	if rep := run(true, nil); rep.Scanned != int64(2*len(rekeySources)) || rep.Merges != int64(len(rekeySources)) || len(rep.Sources) != len(rekeySources) {
		t.Fatalf("dry run over every source: %+v, want %d records scanned and %d merges", rep, 2*len(rekeySources), len(rekeySources))
	}
	if rep := run(true, []string{""}); rep.Scanned != 2 || rep.Merges != 1 {
		t.Fatalf("dry run of the empty source: %+v, want 2 records scanned and 1 merge", rep)
	}
	if rep := run(false, []string{""}); rep.Scanned != 2 || rep.Merges != 1 || rep.Merged != 1 {
		t.Fatalf("rekey of the empty source: %+v, want 1 merge of its 2 records", rep)
	}
	for _, src := range rekeySources {
		want := 2
		if src == "" {
			want = 1
		}
		if n := count(src); n != want {
			t.Fatalf("after rekey of the empty source, source %q has %d records, want %d", src, n, want)
		}
	}
	if rep := run(false, nil); rep.Merges != int64(len(rekeySources)-1) {
		t.Fatalf("rekey of every source: %+v, want %d merges", rep, len(rekeySources)-1)
	}
	for _, src := range rekeySources {
		if n := count(src); n != 1 {
			t.Fatalf("after rekey, source %q has %d records, want 1", src, n)
		}
		r := e.MustGet(ids[src][0])
		if r.Source != src || len(e.history(r.ID)) != 1 {
			t.Fatalf("survivor %d of source %q: source %q, %d history entries", r.ID, src, r.Source, len(e.history(r.ID)))
		}
		e.gone(ids[src][1])
	}
	e.MustCheck()
}

// testRekeyWhileIngesting runs rekey while deliveries continue: under the
// old rules to the records a merge deletes and to the one it keeps, and
// under the new rules to the new key. Every delivery changes its page, and
// a store may refuse one that raced a merge (ECONFLICT: not acknowledged,
// so it is tried again). When the deliveries stop, a last rekey finishes
// the work; then each page is one record whose item is its last
// acknowledged delivery, every acknowledged delivery is that item or in
// its history exactly once, and check is clean.
func testRekeyWhileIngesting(t *testing.T, open func(tb testing.TB) RekeyBackend) {
	e := newRekeyEnv(t, open)
	ctx := context.Background()
	const pages, rounds = 6, 5
	// variants[0] and [1] are two records under the old rules and one
	// page under the new ones, whose own spelling is variants[2].
	variants := func(p int) [3]string {
		u := fmt.Sprintf("https://w.example/page/%d", p)
		return [3]string{u + "?utm_source=feed", u + "/", u}
	}
	var (
		mu    sync.Mutex
		seq   int
		acked = map[int][]int{} // page → acknowledged sequence numbers, in order
	)
	// deliver ingests one delivery of page p under cfg, with content seq,
	// at a time that grows with seq (so the newest content is the last).
	deliver := func(cfg *crawlkeeper.Config, p, v int) error {
		mu.Lock()
		seq++
		n := seq
		mu.Unlock()
		at := T0.Add(time.Duration(n) * time.Second)
		b, _ := json.Marshal(map[string]any{"_source": "w", "title": fmt.Sprintf("Page %d", p), "url": variants(p)[v], "seq": n})
		it, err := (&crawlkeeper.Preparer{Config: cfg}).Prepare(b, 1, crawlkeeper.Meta{}, at)
		if err != nil {
			return err
		}
		batch := &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{it}, Now: at, HistoryLimit: func(string) int { return 1000 }}
		for try := 0; ; try++ {
			_, err = e.Store.Ingest(ctx, batch)
			if err == nil || crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT || try == 50 {
				break
			}
		}
		if err != nil {
			return err
		}
		mu.Lock()
		acked[p] = append(acked[p], n)
		mu.Unlock()
		return nil
	}
	for p := 0; p < pages; p++ {
		for v := 0; v < 2; v++ {
			ok(t, deliver(e.old, p, v))
		}
	}
	rekey := func() *crawlkeeper.RekeyReport {
		k := &crawlkeeper.Rekeyer{Store: e.Store, Config: e.cur, PageSize: 2, Now: func() time.Time { return T0.Add(1000 * time.Hour) }}
		rep, err := k.Run(ctx)
		if err != nil {
			t.Errorf("rekey while ingesting: %v", err)
		}
		return rep
	}

	done := make(chan error, 1)
	go func() {
		defer close(done)
		for r := 0; r < rounds; r++ {
			for p := 0; p < pages; p++ {
				// A delivery to a record a merge deletes or keeps (old
				// rules), then one to the new key (new rules).
				if err := deliver(e.old, p, (p+r)%2); err != nil {
					done <- fmt.Errorf("old-rule delivery: %w", err)
					return
				}
				if err := deliver(e.cur, p, 2); err != nil {
					done <- fmt.Errorf("new-rule delivery: %w", err)
					return
				}
			}
		}
	}()
	runs := 0
	for finished := false; !finished; {
		select {
		case err, more := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = !more
		default:
		}
		rekey()
		runs++
	}
	// Old-rule deliveries after a run make old-key records again; runs
	// after the deliveries stopped merge them.
	for i := 0; ; i++ {
		rep := rekey()
		if rep != nil && rep.Skipped == 0 && rep.Merges == 0 && rep.Rekeyed == 0 {
			break
		}
		if i == 10 {
			t.Fatalf("rekey still finds work after 10 runs with no deliveries: %+v", rep)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d rekey runs while ingesting", runs)

	for _, archived := range []bool{false, true} {
		page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Archived: archived, Limit: 1000})
		ok(t, err)
		if archived {
			if len(page.Records) != 0 {
				t.Fatalf("%d archived records; nothing was archived", len(page.Records))
			}
			continue
		}
		if len(page.Records) != pages {
			t.Fatalf("%d records for %d pages", len(page.Records), pages)
		}
		for _, r := range page.Records {
			var it struct {
				Title string `json:"title"`
				Seq   int    `json:"seq"`
			}
			ok(t, json.Unmarshal(r.Item, &it))
			var p int
			if _, err := fmt.Sscanf(it.Title, "Page %d", &p); err != nil {
				t.Fatalf("record %d: item %s", r.ID, r.Item)
			}
			want := acked[p]
			if last := want[len(want)-1]; it.Seq != last {
				t.Errorf("page %d (record %d): item has delivery %d, the last acknowledged is %d", p, r.ID, it.Seq, last)
			}
			seen := map[int]int{it.Seq: 1}
			for _, h := range e.history(r.ID) {
				var hv struct {
					Seq int `json:"seq"`
				}
				ok(t, json.Unmarshal(h.Item, &hv))
				seen[hv.Seq]++
			}
			for _, n := range want {
				if seen[n] != 1 {
					t.Errorf("page %d (record %d): acknowledged delivery %d is present %d times", p, r.ID, n, seen[n])
				}
			}
		}
	}
	e.MustCheck()
}
