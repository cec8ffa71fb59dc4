package crawlkeeper

import (
	"testing"
	"time"
)

// TestPlanRekeyMerge checks the merge rules on records built by hand:
// the first id survives with the earliest crawled_at, the latest
// last_updated_at and the newest content; every other version goes into
// its history, contiguous below the new version; active wins.
func TestPlanRekeyMerge(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	archivedAt := at(20)
	older := &Record{ID: 7, Key: "k7", Source: "s", Item: []byte(`{"v":"a2"}`), ContentHash: "a2", CrawledAt: at(0), LastUpdatedAt: at(10), LastChangedAt: at(5), Version: 2,
		ArchivedAt: &archivedAt, ArchiveReason: ReasonStale}
	newer := &Record{ID: 9, Key: "k9", Source: "s", Item: []byte(`{"v":"b1"}`), ContentHash: "b1", CrawledAt: at(1), LastUpdatedAt: at(8), LastChangedAt: at(6), Version: 1}
	hist := map[int64][]HistoryEntry{7: {{RecordID: 7, Version: 1, Item: []byte(`{"v":"a1"}`), ContentHash: "a1", ValidFrom: at(0), ValidTo: at(5)}}}
	m := PlanRekeyMerge([]*Record{newer, older}, hist, "new", []string{"url=x"}, at(30))
	s := m.Survivor
	if s.ID != 7 || s.Key != "new" || string(s.Item) != `{"v":"b1"}` || !s.CrawledAt.Equal(at(0)) || !s.LastUpdatedAt.Equal(at(10)) || !s.LastChangedAt.Equal(at(6)) {
		t.Fatalf("survivor %+v", s)
	}
	if s.Archived() {
		t.Fatal("an active record merged into an archived one left the survivor archived")
	}
	if s.Version != 3 || len(m.History) != 2 || m.History[0].Version != 1 || m.History[1].Version != 2 ||
		string(m.History[0].Item) != `{"v":"a1"}` || string(m.History[1].Item) != `{"v":"a2"}` || m.History[1].RecordID != 7 {
		t.Fatalf("version %d, history %+v", s.Version, m.History)
	}
	if d := m.Deleted(); len(d) != 1 || d[0] != 9 {
		t.Fatalf("deleted %v", d)
	}
	// Both archived: the survivor stays archived, with the later archive
	// time and its reason.
	later := at(25)
	newer.ArchivedAt, newer.ArchiveReason = &later, ReasonAge
	m = PlanRekeyMerge([]*Record{older, newer}, hist, "new", nil, at(30))
	if !m.Survivor.Archived() || !m.Survivor.ArchivedAt.Equal(later) || m.Survivor.ArchiveReason != ReasonAge {
		t.Fatalf("survivor of two archived records: archived %v for %q", m.Survivor.ArchivedAt, m.Survivor.ArchiveReason)
	}
	// The state each record was decided on must still hold.
	cur := map[int64]*Record{7: older, 9: newer}
	lookup := func(id int64) (bool, int64, time.Time, bool) {
		r := cur[id]
		return r.Archived(), r.Version, r.LastUpdatedAt, true
	}
	if !m.Holds(lookup) {
		t.Fatal("the merge does not hold in the state it was decided on")
	}
	recrawled := *newer
	recrawled.LastUpdatedAt = at(40)
	cur[9] = &recrawled
	if m.Holds(lookup) {
		t.Fatal("the merge holds after a re-crawl")
	}
}

// TestPlanRekeyMergeRounds checks that the survivor takes the round and
// the target of the most recently delivered record that has each, the
// content's record or not.
func TestPlanRekeyMergeRounds(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	rec := func(id int64, updated, changed int, round, target string) *Record {
		return &Record{ID: id, Key: "k", Source: "s", Item: []byte(`{}`), CrawledAt: at(0), LastUpdatedAt: at(updated), LastChangedAt: at(changed),
			Version: 1, LastRound: round, LastTarget: target}
	}
	for _, c := range []struct {
		name                  string
		recs                  []*Record
		wantRound, wantTarget string
	}{
		{"latest delivery wins", []*Record{rec(1, 10, 9, "3", "a"), rec(2, 5, 5, "2", "b")}, "3", "a"},
		{"not the content's record", []*Record{rec(1, 10, 1, "3", "a"), rec(2, 5, 5, "2", "b")}, "3", "a"},
		{"latest without a round keeps the other's", []*Record{rec(1, 10, 9, "", "a"), rec(2, 5, 5, "2", "")}, "2", "a"},
		{"equal times: higher id", []*Record{rec(1, 5, 5, "1", "a"), rec(2, 5, 5, "2", "b")}, "2", "b"},
		{"none", []*Record{rec(1, 5, 5, "", ""), rec(2, 6, 6, "", "")}, "", ""},
	} {
		m := PlanRekeyMerge(c.recs, nil, "new", nil, at(30))
		if m.Survivor.LastRound != c.wantRound || m.Survivor.LastTarget != c.wantTarget {
			t.Errorf("%s: round %q target %q, want %q %q", c.name, m.Survivor.LastRound, m.Survivor.LastTarget, c.wantRound, c.wantTarget)
		}
	}
}
