package crawlkeeper

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// A date-only deadline is live until the end of that day in the source's
// zone: 2025-09-15 archives at 2025-09-16 00:00 there, not a moment before.
func TestDeadlineEndOfDayInZone(t *testing.T) {
	for _, zone := range []string{"UTC", "Asia/Tokyo", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Berlin"} {
		t.Run(zone, func(t *testing.T) {
			loc := mustZone(t, zone)
			cfg := &Config{Sources: map[string]SourceConfig{"s": {TimeZone: zone}}}
			p, err := (&Preparer{Config: cfg}).Prepare([]byte(`{"title":"t","url":"https://d.test/","deadline":"2025-09-15"}`), 1, Meta{Source: "s"}, T0)
			if err != nil {
				t.Fatal(err)
			}
			midnight := time.Date(2025, 9, 16, 0, 0, 0, 0, loc)
			if p.EventAt == nil || !p.EventAt.Equal(midnight) {
				t.Fatalf("event_at = %v, want %v", p.EventAt, midnight)
			}
			rec := NewRecord(p, time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC))
			rec.Source = "s"
			rules := NewRules(cfg)
			if _, due := rules.Due(rec, midnight.Add(-time.Microsecond)); due {
				t.Fatal("archived before the end of the deadline day")
			}
			if reason, due := rules.Due(rec, midnight); !due || reason != ReasonEvent {
				t.Fatalf("at midnight: due=%v reason=%q, want event", due, reason)
			}
		})
	}
}

func TestDueRules(t *testing.T) {
	now := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	off := Duration(0)
	stale := Duration(3 * day)
	grace := Duration(2 * day)
	noEvent := false
	cfg := &Config{Sources: map[string]SourceConfig{
		"stale":   {StaleAfter: &stale},
		"noage":   {MaxAge: &off},
		"grace":   {Grace: &grace},
		"noevent": {Event: &noEvent},
	}}
	ev := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, tc := range []struct {
		name, source     string
		crawled, updated time.Duration // before now
		event            *time.Time
		want             ArchiveReason
	}{
		{"Fresh", "", day, 0, nil, ""},
		{"AgeBoundary", "", 30 * day, 0, nil, ReasonAge},
		{"JustUnderAge", "", 30*day - time.Second, 0, nil, ""},
		{"AgeOff", "noage", 300 * day, 0, nil, ""},
		{"StaleOffByDefault", "", day, 20 * day, nil, ""},
		{"Stale", "stale", day, 3 * day, nil, ReasonStale},
		{"NotYetStale", "stale", day, 3*day - time.Second, nil, ""},
		{"EventPassed", "", day, 0, ev(-time.Second), ReasonEvent},
		{"EventAtNow", "", day, 0, ev(0), ReasonEvent},
		{"EventFuture", "", day, 0, ev(time.Second), ""},
		{"EventWithinGrace", "grace", day, 0, ev(-day), ""},
		{"EventAfterGrace", "grace", day, 0, ev(-2 * day), ReasonEvent},
		{"EventOff", "noevent", day, 0, ev(-day), ""},
		{"EventWinsOverAge", "", 40 * day, 0, ev(-day), ReasonEvent},
		{"StaleWinsOverAge", "stale", 40 * day, 5 * day, nil, ReasonStale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Record{Source: tc.source, CrawledAt: now.Add(-tc.crawled), LastUpdatedAt: now.Add(-tc.updated), EventAt: tc.event}
			reason, due := NewRules(cfg).Due(rec, now)
			if due != (tc.want != "") || reason != tc.want {
				t.Fatalf("Due = %q, %v; want %q", reason, due, tc.want)
			}
			// The cutoffs a store selects with must agree with Due.
			p, _ := cfg.Policy(tc.source)
			c := p.Cutoffs(now)
			byCutoff := (!c.CrawledBefore.IsZero() && !rec.CrawledAt.After(c.CrawledBefore)) ||
				(!c.UpdatedBefore.IsZero() && !rec.LastUpdatedAt.After(c.UpdatedBefore)) ||
				(p.Event && rec.EventAt != nil && !rec.EventAt.After(c.EventBefore))
			if byCutoff != due {
				t.Fatalf("cutoffs say due=%v, Due says %v", byCutoff, due)
			}
		})
	}
}

func TestEventFields(t *testing.T) {
	cfg := &Config{}
	prep := &Preparer{Config: cfg}
	p, err := prep.Prepare([]byte(`{"title":"t","url":"https://e.test/","deadline":"2025-10-01T10:00:00Z","expires":"2025-10-03","closing_date":"whenever","event_date":""}`), 1, Meta{}, T0)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 10, 4, 0, 0, 0, 0, time.UTC)
	if p.EventAt == nil || !p.EventAt.Equal(want) {
		t.Fatalf("event_at = %v, want the latest field's end %v", p.EventAt, want)
	}
	if strings.Join(p.DateErrors, "|") != "whenever" {
		t.Fatalf("date_errors = %q", p.DateErrors)
	}
	// The stored value stays raw, so that a later parser reads it again;
	// messages name the field.
	if len(p.DateFailures) != 1 || p.DateFailures[0].String() != `closing_date: cannot read "whenever"` {
		t.Fatalf("date failures = %v", p.DateFailures)
	}
	pol, _ := cfg.Policy("")
	item, _, _ := DecodeItem(p.Item, Meta{})
	if got := DateErrorFields(pol, item, p.DateErrors); len(got) != 1 || got[0] != p.DateFailures[0] {
		t.Fatalf("fields recovered from the stored record = %v", got)
	}
	if got := DateErrorFields(pol, item, []string{"gone"}); got[0].Field != "?" {
		t.Fatalf("a value no field holds = %v", got)
	}
	bad, _ := prep.Prepare([]byte(`{"title":"t","url":"https://e.test/","deadline":"soon"}`), 1, Meta{}, T0)
	if bad.EventAt != nil {
		t.Fatalf("an unreadable deadline must not produce event_at, got %v", bad.EventAt)
	}
	off := Duration(0)
	noAge := &Config{Defaults: SourceConfig{MaxAge: &off}}
	if reason, due := NewRules(noAge).Due(NewRecord(bad, T0), T0.Add(10*365*24*time.Hour)); due {
		t.Fatalf("a date error archived a record (reason %q)", reason)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"30d", 30 * 24 * time.Hour, false},
		{"2w", 14 * 24 * time.Hour, false},
		{"1d12h", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"off", 0, false},
		{"0", 0, false},
		{"1.5d", 36 * time.Hour, false},
		{"soon", 0, true},
		{"3x", 0, true},
		{"-1d", 0, true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.err || got.D() != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v (error %v)", tc.in, got.D(), err, tc.want, tc.err)
		}
	}
	if s := Duration(48 * time.Hour).String(); s != "2d" {
		t.Errorf("String = %q", s)
	}
}

func TestMergeKeepsInvariants(t *testing.T) {
	p1, _ := (&Preparer{}).Prepare([]byte(`{"title":"m","url":"https://m.test/","v":1}`), 1, Meta{}, T0)
	cur := NewRecord(p1, T0)
	cur.ID = 9
	p2, _ := (&Preparer{}).Prepare([]byte(`{"title":"m","url":"https://m.test/","v":2}`), 1, Meta{}, T0)
	// A delivery with an older clock: nothing may move backwards.
	next, hist := Merge(cur, p2, T0.Add(-time.Hour))
	if hist == nil || next.Version != 2 || !next.LastUpdatedAt.Equal(T0) || !next.LastChangedAt.Equal(T0) {
		t.Fatalf("next = %+v hist = %+v", next, hist)
	}
	if !hist.ValidTo.Equal(hist.ValidFrom) || hist.Version != 1 || hist.RecordID != 9 {
		t.Fatalf("history entry = %+v", hist)
	}
	if cur.Version != 1 || string(cur.Item) == string(next.Item) {
		t.Fatal("Merge modified its input")
	}
}
