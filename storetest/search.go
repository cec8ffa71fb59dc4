package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// searchDoc is one record of the search corpus.
type searchDoc struct {
	source, title, body, deadline string
}

// searchCorpus has records in English, German, Russian, Japanese, Chinese
// and Korean, with diacritics, Cyrillic and scripts without spaces.
var searchCorpus = []searchDoc{
	{"en", "Open Day at the University of Vienna", "Join us for campus tours, lectures and a concert in the main hall.", "2025-03-20"},
	{"en", "University Library opening hours", "The library opens at eight; the reading room closes later during exams.", ""},
	{"en", "Concert in the Main Hall", "An evening of chamber music with the university orchestra.", "2025-03-10"},
	{"de", "Tag der offenen Tür an der Universität Wien", "Führungen durch die Bibliothek und Vorträge über Studiengänge.", "2025-04-02"},
	{"de", "Straßenfest in München", "Musik, Essen und Kinderprogramm auf der Leopoldstraße.", ""},
	{"ru", "День открытых дверей в МГУ", "Экскурсии по кампусу и лекции для абитуриентов. Ёлка во дворе.", "2025-03-15"},
	{"ru", "Ночь музеев в Санкт-Петербурге", "Музеи открыты до полуночи.", ""},
	{"ja", "東京大学のオープンキャンパス", "東京都文京区の本郷キャンパスで開催されます。", "2025-05-01"},
	{"ja", "京都の紅葉ライトアップ", "清水寺で夜間特別拝観。", ""},
	{"zh", "北京大学开放日", "欢迎参观北京大学校园和图书馆。", ""},
	{"zh", "上海国际电影节", "电影节在上海举行，展映来自世界各地的影片。", ""},
	{"ko", "서울대학교 입학설명회", "서울에서 열리는 설명회에 참여하세요.", ""},
	{"en", "Open call for papers", "Submit your papers before the deadline.", ""},
}

// searchWant lists queries with the titles (by corpus index) they must
// find, on every store; the reference semantics (SearchExpr.Matches) must
// agree too.
var searchWant = []struct {
	q    string
	want []int
}{
	{"university", []int{0, 1, 2}},
	{"University VIENNA", []int{0}},
	{`"open day"`, []int{0}},
	{`"day open"`, nil},
	{"open", []int{0, 12}},
	{"open*", []int{0, 1, 12}},
	{"open -papers", []int{0}},
	{`concert "main hall"`, []int{0, 2}},
	{"chamber-mus*", []int{2}},
	{"university -chamber-mus*", []int{0, 1}},
	{"hall -main-ha*", nil},
	{"universität", []int{3}},
	{"UNIVERSITAT wien", []int{3}},
	{"fuhrungen", []int{3}},
	{"strasse*", []int{4}},
	{"straßenfest", []int{4}},
	{"münchen", []int{4}},
	{"день дверей", []int{5}},
	{"елка", []int{5}},
	{"ЁЛКА", []int{5}},
	{"музеи", []int{6}},
	{"музе*", []int{6}},
	{"東京", []int{7}},
	{"京都", []int{7, 8}},
	{"大学", []int{7, 9}},
	{"京", []int{7, 8, 9}},
	{"オープンキャンパス", []int{7}},
	{"北京大学", []int{9}},
	{"电影节", []int{10}},
	{"上海 -电影", nil},
	{"서울", []int{11}},
	{"nothing-like-this", nil},
}

// SearchBackend is a store with the records, archive and search roles:
// the search suite checks that archive moves, restores and purges keep
// the index right.
type SearchBackend interface {
	ArchiveBackend
	crawlkeeper.SearchStore
}

// RunSearch runs the conformance tests of crawlkeeper.SearchStore.
func RunSearch(t *testing.T, open func(tb testing.TB) SearchBackend) { testSearch(t, open) }

// searchEnv ingests the corpus (every third record, starting with the
// concert, a day after the others) and returns the record ids by corpus
// index.
func searchEnv(t *testing.T, open func(tb testing.TB) SearchBackend) (*Env[SearchBackend], crawlkeeper.SearchStore, []int64) {
	t.Helper()
	e := NewEnv(t, open)
	ss := e.Store
	ids := make([]int64, len(searchCorpus))
	for half := 0; half < 2; half++ {
		e.Now = T0.Add(time.Duration(half) * 24 * time.Hour)
		var items []string
		var idx []int
		for i, d := range searchCorpus {
			if (i%3 == 2) != (half == 1) {
				continue
			}
			items = append(items, searchItem(i, d))
			idx = append(idx, i)
		}
		res := e.Ingest(items...)
		for k, i := range idx {
			ids[i] = res.IDs[k]
		}
	}
	return e, ss, ids
}

func searchItem(i int, d searchDoc) string {
	m := map[string]any{"title": d.title, "url": fmt.Sprintf("https://search.test/%d", i), "body": d.body, "_source": d.source}
	if d.deadline != "" {
		m["deadline"] = d.deadline
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// searchAll runs q through every page (limit per page) and returns the ids
// found, in order, failing on a repeated hit.
func searchAll(t *testing.T, ss crawlkeeper.SearchStore, q crawlkeeper.SearchQuery) []int64 {
	t.Helper()
	var out []int64
	seen := map[int64]bool{}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("search %q: more than 100 pages", q.Text)
		}
		page, err := ss.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("search %q: %v", q.Text, err)
		}
		if len(page.Hits) > q.Limit && q.Limit > 0 {
			t.Fatalf("search %q: %d hits on a page of %d", q.Text, len(page.Hits), q.Limit)
		}
		for _, h := range page.Hits {
			if seen[h.Record.ID] {
				t.Fatalf("search %q: record %d on two pages", q.Text, h.Record.ID)
			}
			seen[h.Record.ID] = true
			out = append(out, h.Record.ID)
		}
		if page.Next == "" {
			return out
		}
		q.Cursor = page.Next
	}
}

func sortedIDs(xs []int64) []int64 {
	out := append([]int64(nil), xs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func idsOf(ids []int64, idx []int) []int64 {
	out := []int64{}
	for _, i := range idx {
		out = append(out, ids[i])
	}
	return sortedIDs(out)
}

// indexless returns why the store searches without a full-text index, or
// "" (see crawlkeeper.SearchIndexReporter).
func indexless(s any) string {
	if r, ok := s.(crawlkeeper.SearchIndexReporter); ok {
		return r.SearchWithoutIndex()
	}
	return ""
}

func testSearch(t *testing.T, open func(tb testing.TB) SearchBackend) {
	ctx := context.Background()

	t.Run("SameResultsEverywhere", func(t *testing.T) {
		e, ss, ids := searchEnv(t, open)
		texts := make([]string, len(searchCorpus))
		for i := range searchCorpus {
			texts[i] = e.Prepare(searchItem(i, searchCorpus[i])).SearchText
		}
		for _, c := range searchWant {
			want := idsOf(ids, c.want)
			// The reference semantics agree with the expected titles.
			expr, err := crawlkeeper.ParseSearch(c.q)
			if err != nil {
				t.Fatalf("parse %q: %v", c.q, err)
			}
			var ref []int
			for i, text := range texts {
				if expr.Matches(text) {
					ref = append(ref, i)
				}
			}
			if fmt.Sprint(idsOf(ids, ref)) != fmt.Sprint(want) {
				t.Errorf("%q: the reference semantics find %v, the test expects %v", c.q, ref, c.want)
			}
			for _, order := range []crawlkeeper.SearchOrder{crawlkeeper.SearchRelevance, crawlkeeper.SearchNewest} {
				got := searchAll(t, ss, crawlkeeper.SearchQuery{Text: c.q, Limit: 2, Order: order})
				if fmt.Sprint(sortedIDs(got)) != fmt.Sprint(want) {
					t.Errorf("%q (order %d): found %v, want %v (titles %v)", c.q, order, sortedIDs(got), want, c.want)
				}
			}
		}
	})

	t.Run("ExactTitleFirst", func(t *testing.T) {
		e, ss, ids := searchEnv(t, open)
		if why := indexless(e.Store); why != "" {
			t.Skip(why)
		}
		// The concert's title words are all in the open day's body too.
		for _, i := range []int{2, 3, 5, 7, 10} {
			page, err := ss.Search(ctx, crawlkeeper.SearchQuery{Text: searchCorpus[i].title})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Hits) == 0 || page.Hits[0].Record.ID != ids[i] {
				var got []string
				for _, h := range page.Hits {
					got = append(got, fmt.Sprintf("%s (%g)", h.Record.Title, h.Score))
				}
				t.Errorf("search for the title %q ranks %v", searchCorpus[i].title, got)
			}
			for k := 1; k < len(page.Hits); k++ {
				if page.Hits[k].Score > page.Hits[k-1].Score {
					t.Errorf("scores are not in descending order: %v", page.Hits)
				}
			}
		}
	})

	t.Run("NewestOrder", func(t *testing.T) {
		_, ss, ids := searchEnv(t, open)
		got := searchAll(t, ss, crawlkeeper.SearchQuery{Text: "university", Order: crawlkeeper.SearchNewest, Limit: 1})
		// The concert (index 2) came a day after the others.
		if want := []int64{ids[2], ids[1], ids[0]}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("newest first: %v, want %v", got, want)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		_, ss, ids := searchEnv(t, open)
		day := 24 * time.Hour
		for _, c := range []struct {
			name string
			q    crawlkeeper.SearchQuery
			want []int
		}{
			{"source", crawlkeeper.SearchQuery{Text: "universit*", Source: "de"}, []int{3}},
			{"since", crawlkeeper.SearchQuery{Text: "university", Since: T0.Add(day)}, []int{2}},
			{"until", crawlkeeper.SearchQuery{Text: "university", Until: T0.Add(day)}, []int{0, 1}},
			{"event range", crawlkeeper.SearchQuery{Text: "university", EventFrom: time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC), EventTo: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}, []int{0}},
			{"event from", crawlkeeper.SearchQuery{Text: "universit*", EventFrom: time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)}, []int{0, 3}},
			{"all filters", crawlkeeper.SearchQuery{Text: "university", Source: "en", Since: T0, Until: T0.Add(2 * day), EventTo: time.Date(2025, 3, 12, 0, 0, 0, 0, time.UTC)}, []int{2}},
		} {
			for _, order := range []crawlkeeper.SearchOrder{crawlkeeper.SearchRelevance, crawlkeeper.SearchNewest} {
				c.q.Order, c.q.Limit = order, 1
				got := sortedIDs(searchAll(t, ss, c.q))
				if want := idsOf(ids, c.want); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s (order %d): %v, want %v", c.name, order, got, want)
				}
			}
		}
	})

	t.Run("RoundFilters", func(t *testing.T) { testSearchRounds(t, open) })

	t.Run("TiedScoresPage", func(t *testing.T) {
		// Records whose texts differ only in a word nobody searches for
		// score alike: pages of relevance order must still hold each of
		// them once, ties broken by id, with a source filter or without.
		e := NewEnv(t, open)
		var items []string
		for i := 0; i < 9; i++ {
			src := "tied-a"
			if i%3 == 0 {
				src = "tied-b"
			}
			m := map[string]any{"title": fmt.Sprintf("harbour notice %c%c", 'a'+i, 'a'+i), "url": fmt.Sprintf("https://tied.test/%d", i), "body": "ferry timetable", "_source": src}
			b, _ := json.Marshal(m)
			items = append(items, string(b))
		}
		ids := e.Ingest(items...).IDs
		for _, c := range []struct {
			source string
			want   []int64
		}{{"", ids}, {"tied-b", []int64{ids[0], ids[3], ids[6]}}} {
			for _, limit := range []int{1, 2, 4} {
				got := searchAll(t, e.Store, crawlkeeper.SearchQuery{Text: "ferry", Source: c.source, Limit: limit})
				if fmt.Sprint(got) != fmt.Sprint(sortedIDs(c.want)) {
					t.Errorf("source %q, pages of %d: %v, want every tied record once in id order %v", c.source, limit, got, sortedIDs(c.want))
				}
			}
		}
	})

	t.Run("IndexFollowsWrites", func(t *testing.T) {
		e, ss, ids := searchEnv(t, open)
		find := func(q string, archived bool) []int64 {
			t.Helper()
			return sortedIDs(searchAll(t, ss, crawlkeeper.SearchQuery{Text: q, Archived: archived, Limit: 10}))
		}
		expect := func(what string, got []int64, want ...int64) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(sortedIDs(want)) {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
		// A content change replaces the indexed words.
		e.Now = T0.Add(48 * time.Hour)
		changed := searchCorpus[1]
		changed.body = "The library moves to the observatory building."
		if res := e.Ingest(searchItem(1, changed)); res.Outcomes[0] != crawlkeeper.OutcomeChanged {
			t.Fatalf("outcome %v, want changed", res.Outcomes[0])
		}
		expect("old word after a change", find("exams", false))
		expect("new word after a change", find("observatory", false), ids[1])
		// A re-delivery without change keeps the record findable.
		e.Ingest(searchItem(1, changed))
		expect("after an unchanged delivery", find("observatory", false), ids[1])
		e.MustCheck()

		// Archiving moves the record to the archive's index.
		r := e.MustGet(ids[1])
		moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now)
		if err != nil || len(moved) != 1 {
			t.Fatalf("archive: %v %v", moved, err)
		}
		expect("active after archiving", find("observatory", false))
		expect("archive after archiving", find("observatory", true), ids[1])
		expect("archive with a filter", sortedIDs(searchAll(t, ss, crawlkeeper.SearchQuery{Text: "library", Archived: true, Source: "en"})), ids[1])
		e.MustCheck()

		// A changed delivery of an archived record that stays archived
		// re-indexes the archived copy.
		due := func(*crawlkeeper.Record) (crawlkeeper.ArchiveReason, bool) { return crawlkeeper.ReasonManual, true }
		changed.body = "The library closes for renovation."
		p := e.Prepare(searchItem(1, changed))
		if res, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: e.Now, Due: due}); err != nil || res.Outcomes[0] != crawlkeeper.OutcomeRefreshed {
			t.Fatalf("refresh archived: %v %v", res, err)
		}
		expect("archive after a refresh", find("renovation", true), ids[1])
		expect("archive, old word after a refresh", find("observatory", true))
		e.MustCheck()

		// Restoring moves it back.
		if got, err := e.Store.Restore(ctx, []int64{ids[1]}); err != nil || len(got) != 1 {
			t.Fatalf("restore: %v %v", got, err)
		}
		expect("active after restore", find("renovation", false), ids[1])
		expect("archive after restore", find("renovation", true))
		e.MustCheck()

		// A revived record (archived, then delivered again and not due)
		// is found in active.
		r = e.MustGet(ids[1])
		if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil {
			t.Fatal(err)
		}
		e.Now = e.Now.Add(time.Hour)
		if res := e.Ingest(searchItem(1, changed)); res.Outcomes[0] != crawlkeeper.OutcomeRevived {
			t.Fatalf("outcome %v, want revived", res.Outcomes[0])
		}
		expect("active after revival", find("renovation", false), ids[1])
		expect("archive after revival", find("renovation", true))
		e.MustCheck()

		// Purging removes it from the archive's index.
		r = e.MustGet(ids[4])
		if _, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil {
			t.Fatal(err)
		}
		expect("archive before purge", find("münchen", true), ids[4])
		if res, err := e.Store.Purge(ctx, []crawlkeeper.RecordState{crawlkeeper.StateOf(e.MustGet(ids[4]))}); err != nil || len(res.Purged) != 1 {
			t.Fatalf("purge: %+v %v", res, err)
		}
		expect("archive after purge", find("münchen", true))
		expect("active after purge", find("münchen", false))
		e.MustCheck()
	})

	t.Run("SearchOff", func(t *testing.T) {
		e := NewEnv(t, open)
		off := false
		e.Config = &crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"quiet": {Search: &off}}}
		e.Ingest(`{"title":"Hidden concert","url":"https://q.test/1","_source":"quiet"}`, `{"title":"Loud concert","url":"https://q.test/2","_source":"loud"}`)
		got := searchAll(t, e.Store, crawlkeeper.SearchQuery{Text: "concert"})
		if len(got) != 1 || e.MustGet(got[0]).Title != "Loud concert" {
			t.Fatalf("search with one source's search off found %v", got)
		}
		e.MustCheck()
	})

	t.Run("SetSearchText", func(t *testing.T) {
		e, ss, ids := searchEnv(t, open)
		r := e.MustGet(ids[0])
		n, err := ss.SetSearchText(ctx, []crawlkeeper.SearchTextUpdate{
			{ID: r.ID, Version: r.Version, Text: "rewritten words"},
			{ID: ids[1], Version: 99, Text: "stale version"},
		})
		if err != nil || n != 1 {
			t.Fatalf("set search text: %d %v, want 1 rewritten", n, err)
		}
		if got := searchAll(t, ss, crawlkeeper.SearchQuery{Text: "rewritten"}); fmt.Sprint(got) != fmt.Sprint([]int64{ids[0]}) {
			t.Fatalf("after rewrite: %v", got)
		}
		if got := searchAll(t, ss, crawlkeeper.SearchQuery{Text: "stale"}); len(got) != 0 {
			t.Fatalf("a stale version was rewritten: %v", got)
		}
		if got := searchAll(t, ss, crawlkeeper.SearchQuery{Text: "vienna"}); len(got) != 0 {
			t.Fatalf("the old text is still indexed: %v", got)
		}
		e.MustCheck()
	})

	t.Run("Snippets", func(t *testing.T) {
		e, ss, _ := searchEnv(t, open)
		page, err := crawlkeeper.Search(ctx, ss, e.Config, crawlkeeper.SearchQuery{Text: "fuhrungen bibliothek"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Hits) != 1 {
			t.Fatalf("hits %v", page.Hits)
		}
		got := crawlkeeper.SnippetString(page.Hits[0].Snippet, "[", "]")
		if !strings.Contains(got, "[Führungen]") || !strings.Contains(got, "[Bibliothek]") {
			t.Fatalf("snippet %q does not mark the matches as written", got)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		_, ss, _ := searchEnv(t, open)
		for _, q := range []crawlkeeper.SearchQuery{
			{Text: ""}, {Text: "-only"}, {Text: "x", Cursor: "garbage"}, {Text: "x", Limit: crawlkeeper.MaxSearchLimit + 1},
			{Text: "x", Since: T0, Until: T0},
			{Text: "x", Round: "bad\nround"}, {Text: "x", Target: strings.Repeat("t", 1025)},
		} {
			if _, err := ss.Search(ctx, q); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
				t.Errorf("search %+v: %v, want EINVALID", q, err)
			}
		}
	})
}

// roundItem is a search item with a round and a target; an empty value
// leaves the metadata key out.
func roundItem(name, body, round, target string) string {
	return itemWithRound(map[string]any{"title": name + " concert", "url": "https://rounds.test/" + name, "body": body, "_source": "rounds"}, round, target)
}

// testSearchRounds checks the round and target filters: each record is
// found under the round and target of its last delivery that carried them,
// through changes, unchanged deliveries, deliveries without them, archive
// moves, refreshes, restores and revivals.
func testSearchRounds(t *testing.T, open func(tb testing.TB) SearchBackend) {
	ctx := context.Background()
	e := NewEnv(t, open)
	ss := e.Store
	ids := map[string]int64{}
	ingest := func(items ...string) *crawlkeeper.IngestResult {
		t.Helper()
		res := e.Ingest(items...)
		for i, js := range items {
			var m struct{ Title string }
			json.Unmarshal([]byte(js), &m)
			ids[strings.TrimSuffix(m.Title, " concert")] = res.IDs[i]
		}
		return res
	}
	type want struct{ round, target string }
	expectRecords := func(what string, w map[string]want) {
		t.Helper()
		for name, x := range w {
			r := e.MustGet(ids[name])
			if r.LastRound != x.round || r.LastTarget != x.target {
				t.Errorf("%s: %s has round %q and target %q, want %q and %q", what, name, r.LastRound, r.LastTarget, x.round, x.target)
			}
		}
	}
	find := func(q crawlkeeper.SearchQuery, names ...string) {
		t.Helper()
		q.Text = "concert"
		want := []int64{}
		for _, n := range names {
			want = append(want, ids[n])
		}
		for _, order := range []crawlkeeper.SearchOrder{crawlkeeper.SearchRelevance, crawlkeeper.SearchNewest} {
			q.Order, q.Limit = order, 1
			if got := sortedIDs(searchAll(t, ss, q)); fmt.Sprint(got) != fmt.Sprint(sortedIDs(want)) {
				t.Errorf("round %q target %q archived %v (order %d): %v, want %v %v", q.Round, q.Target, q.Archived, order, got, sortedIDs(want), names)
			}
		}
	}

	// Round 1 delivers a, b and c; d comes without a round or target.
	ingest(roundItem("a", "first", "1", "site-a"), roundItem("b", "first", "1", "site-b"), roundItem("c", "first", "1", "site-a"), roundItem("d", "first", "", ""))
	find(crawlkeeper.SearchQuery{Round: "1"}, "a", "b", "c")
	find(crawlkeeper.SearchQuery{Target: "site-a"}, "a", "c")
	find(crawlkeeper.SearchQuery{Round: "1", Target: "site-b"}, "b")

	// Round 2 redelivers a unchanged from another target (it moves to
	// round 2 and that target) and b changed without a target (round 2,
	// target kept).
	e.Now = T0.Add(time.Hour)
	if res := ingest(roundItem("a", "first", "2", "site-b"), roundItem("b", "second", "2", "")); res.Outcomes[0] != crawlkeeper.OutcomeUnchanged || res.Outcomes[1] != crawlkeeper.OutcomeChanged {
		t.Fatalf("round 2 outcomes %v, want unchanged and changed", res.Outcomes)
	}
	// Deliveries without a round keep the previous one: c unchanged with
	// nothing, d changed with a target only.
	e.Now = T0.Add(2 * time.Hour)
	ingest(roundItem("c", "first", "", ""), roundItem("d", "second", "", "site-d"))
	// In one batch the last delivery that carries a round wins, and a
	// later delivery of the same key without one keeps it.
	ingest(roundItem("e", "first", "2", "site-e"), roundItem("e", "second", "3", ""), roundItem("e", "third", "", ""))
	expectRecords("after the deliveries", map[string]want{
		"a": {"2", "site-b"}, "b": {"2", "site-b"}, "c": {"1", "site-a"}, "d": {"", "site-d"}, "e": {"3", "site-e"},
	})
	find(crawlkeeper.SearchQuery{Round: "1"}, "c")
	find(crawlkeeper.SearchQuery{Round: "2"}, "a", "b")
	find(crawlkeeper.SearchQuery{Round: "3"}, "e")
	find(crawlkeeper.SearchQuery{Round: "4"})
	find(crawlkeeper.SearchQuery{Target: "site-b"}, "a", "b")
	find(crawlkeeper.SearchQuery{Target: "site-a"}, "c")
	find(crawlkeeper.SearchQuery{Target: "site-d"}, "d")
	find(crawlkeeper.SearchQuery{Round: "2", Target: "site-b", Source: "rounds"}, "a", "b")
	find(crawlkeeper.SearchQuery{Round: "2", Source: "other"})
	// Exact match: no prefix or case folding.
	find(crawlkeeper.SearchQuery{Target: "site"})
	find(crawlkeeper.SearchQuery{Target: "SITE-A"})
	e.MustCheck()

	// Archive moves carry them, and archive search filters on them.
	archive := func(name string) {
		t.Helper()
		r := e.MustGet(ids[name])
		if moved, err := e.Store.Archive(ctx, []crawlkeeper.Move{{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil || len(moved) != 1 {
			t.Fatalf("archive %s: %v %v", name, moved, err)
		}
	}
	archive("a")
	archive("c")
	find(crawlkeeper.SearchQuery{Round: "2"}, "b")
	find(crawlkeeper.SearchQuery{Round: "2", Archived: true}, "a")
	find(crawlkeeper.SearchQuery{Target: "site-a", Archived: true}, "c")
	expectRecords("archived", map[string]want{"a": {"2", "site-b"}, "c": {"1", "site-a"}})

	// A delivery of an archived record that stays archived refreshes its
	// round in the archive.
	e.Now = T0.Add(3 * time.Hour)
	due := func(*crawlkeeper.Record) (crawlkeeper.ArchiveReason, bool) { return crawlkeeper.ReasonManual, true }
	p := e.Prepare(roundItem("c", "first", "4", ""))
	if res, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: e.Now, Due: due}); err != nil || res.Outcomes[0] != crawlkeeper.OutcomeRefreshed {
		t.Fatalf("refresh archived: %v %v", res, err)
	}
	p = e.Prepare(roundItem("a", "changed in the archive", "4", "site-x"))
	if res, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: e.Now, Due: due}); err != nil || res.Outcomes[0] != crawlkeeper.OutcomeRefreshed {
		t.Fatalf("refresh archived: %v %v", res, err)
	}
	find(crawlkeeper.SearchQuery{Round: "4", Archived: true}, "a", "c")
	find(crawlkeeper.SearchQuery{Target: "site-a", Archived: true}, "c")
	find(crawlkeeper.SearchQuery{Round: "4"})

	// A restore brings them back to active with it.
	if got, err := e.Store.Restore(ctx, []int64{ids["c"]}); err != nil || len(got) != 1 {
		t.Fatalf("restore: %v %v", got, err)
	}
	find(crawlkeeper.SearchQuery{Round: "4"}, "c")
	find(crawlkeeper.SearchQuery{Round: "4", Archived: true}, "a")

	// A revival in a new round moves the record to that round.
	e.Now = T0.Add(4 * time.Hour)
	if res := ingest(roundItem("a", "changed in the archive", "5", "")); res.Outcomes[0] != crawlkeeper.OutcomeRevived {
		t.Fatalf("outcome %v, want revived", res.Outcomes[0])
	}
	find(crawlkeeper.SearchQuery{Round: "5"}, "a")
	find(crawlkeeper.SearchQuery{Target: "site-x"}, "a")
	find(crawlkeeper.SearchQuery{Round: "4", Archived: true})
	expectRecords("at the end", map[string]want{
		"a": {"5", "site-x"}, "b": {"2", "site-b"}, "c": {"4", "site-a"}, "d": {"", "site-d"}, "e": {"3", "site-e"},
	})
	e.MustCheck()
}
