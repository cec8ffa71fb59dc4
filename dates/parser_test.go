package dates

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestMachineMatchesStdlib checks the hand-written RFC 3339 reader against
// the standard library on the same strings.
func TestMachineMatchesStdlib(t *testing.T) {
	p := New()
	zones := []*time.Location{time.UTC, time.FixedZone("", 9*3600), time.FixedZone("", -(3*3600 + 1800)), time.FixedZone("", 5*3600+2700)}
	base := time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)
	for i := 0; i < 2000; i++ {
		u := base.Add(time.Duration(i) * 104729 * time.Second).Add(time.Duration(i%7) * 123456789)
		for _, z := range zones {
			s := u.In(z).Format(time.RFC3339Nano)
			want, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.ParseDate(s, crawlkeeper.DateOptions{})
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if !got.Time.Equal(want) || got.Time.Format(time.RFC3339Nano) != s || got.DateOnly {
				t.Fatalf("%s: got %s (date only %v), want %s", s, got.Time.Format(time.RFC3339Nano), got.DateOnly, s)
			}
		}
	}
}

// TestJalaliRoundTrip converts every day of several years both ways.
func TestJalaliRoundTrip(t *testing.T) {
	for d := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2040; d = d.AddDate(0, 0, 1) {
		jy, jm, jd := gregorianToJalali(d.Year(), int(d.Month()), d.Day())
		gy, gm, gd, ok := jalaliToGregorian(jy, jm, jd)
		if !ok || gy != d.Year() || gm != int(d.Month()) || gd != d.Day() {
			t.Fatalf("%s -> %d/%d/%d -> %d-%d-%d %v", d.Format("2006-01-02"), jy, jm, jd, gy, gm, gd, ok)
		}
	}
	// Known new years (Nowruz).
	for _, c := range []struct{ jy, gy, gm, gd int }{{1399, 2020, 3, 20}, {1402, 2023, 3, 21}, {1403, 2024, 3, 20}} {
		gy, gm, gd, ok := jalaliToGregorian(c.jy, 1, 1)
		if !ok || gy != c.gy || gm != c.gm || gd != c.gd {
			t.Errorf("1 Farvardin %d = %d-%d-%d, want %d-%d-%d", c.jy, gy, gm, gd, c.gy, c.gm, c.gd)
		}
	}
}

func TestCacheBounded(t *testing.T) {
	c := newCache(64)
	for i := 0; i < 10000; i++ {
		c.put(cacheKey{s: fmt.Sprint(i)}, reading{kind: rFixed})
	}
	if n := c.len(); n > 64 {
		t.Fatalf("cache holds %d entries, limit 64", n)
	}
	// A key in use survives rotation.
	hot := cacheKey{s: "hot"}
	c.put(hot, reading{kind: rFixed})
	for i := 0; i < 10000; i++ {
		c.put(cacheKey{s: fmt.Sprint("x", i)}, reading{})
		if _, ok := c.get(hot); !ok {
			t.Fatalf("hot key evicted after %d puts", i)
		}
	}
}

// TestFallbackCache checks that fallback outcomes are remembered per
// string and options in a form that takes now at each read: a date
// without a year takes the year of now, a relative date is read against
// now, and neither asks the library again.
func TestFallbackCache(t *testing.T) {
	p := New()
	o := crawlkeeper.DateOptions{Languages: []string{"th"}, Now: time.Date(2024, 5, 22, 0, 0, 0, 0, time.UTC)}
	read := func(s string, o crawlkeeper.DateOptions) string {
		t.Helper()
		d, err := p.ParseDate(s, o)
		if err != nil {
			return "error"
		}
		return d.Time.Format(time.RFC3339)
	}
	// Thai is left to the library.
	if got := read("3 วันที่แล้ว", o); got != "2024-05-19T00:00:00Z" {
		t.Fatalf("relative: got %s", got)
	}
	n := p.cache.len()
	if n == 0 {
		t.Fatal("the library's reading was not remembered")
	}
	calls := p.fallback.calls.Load()
	o.Now = o.Now.AddDate(1, 0, 1)
	if got := read("3 วันที่แล้ว", o); got != "2025-05-20T00:00:00Z" || p.cache.len() != n || p.fallback.calls.Load() != calls {
		t.Fatalf("relative, a year and a day later: got %s, cache %d -> %d entries, %d library calls",
			got, n, p.cache.len(), p.fallback.calls.Load()-calls)
	}
	th := crawlkeeper.DateOptions{Languages: []string{"th"}, Now: time.Date(2024, 5, 22, 0, 0, 0, 0, time.UTC)}
	if got := read("15 ตุลาคม 2567", th); got != "2024-10-15T00:00:00Z" {
		t.Fatalf("Buddhist year: got %s", got)
	}
	if got := read("15 ตุลาคม", th); got != "2024-10-15T00:00:00Z" {
		t.Fatalf("without year: got %s", got)
	}
	calls = p.fallback.calls.Load()
	th.Now = th.Now.AddDate(1, 0, 0)
	if got := read("15 ตุลาคม", th); got != "2025-10-15T00:00:00Z" || p.fallback.calls.Load() != calls {
		t.Fatalf("without year, a year later: got %s, %d library calls", got, p.fallback.calls.Load()-calls)
	}
}

func TestNoFallback(t *testing.T) {
	p := NewWithOptions(Options{NoFallback: true})
	o := crawlkeeper.DateOptions{Languages: []string{"th"}}
	if _, err := p.ParseDate("3 วันที่แล้ว", o); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Fatalf("got %v, want an invalid error", err)
	}
	if d, err := p.ParseDate("15 May 2024", o); err != nil || d.Time.Day() != 15 {
		t.Fatalf("hand-written form: %v %v", d, err)
	}
}

// TestConcurrentUse reads the corpus from several goroutines; run with
// -race it checks that the parser shares nothing unsafely.
func TestConcurrentUse(t *testing.T) {
	p := New()
	in := MixedCorpus(400, 7)
	o := crawlkeeper.DateOptions{Now: time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)}
	want := make([]string, len(in))
	for i, s := range in {
		want[i] = outcome(p.ParseDate(s, o))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := range in {
				k := (i + g*50) % len(in)
				if got := outcome(p.ParseDate(in[k], o)); got != want[k] {
					errs <- fmt.Sprintf("%q: %s, then %s", in[k], want[k], got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func outcome(d crawlkeeper.ParsedDate, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s %s %v", d.Time.Format(time.RFC3339Nano), d.Time.Location(), d.DateOnly)
}

func TestMixedCorpus(t *testing.T) {
	a, b := MixedCorpus(3000, 42), MixedCorpus(3000, 42)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("corpus differs at %d: %q, %q", i, a[i], b[i])
		}
	}
	if c := MixedCorpus(3000, 43); fmt.Sprint(c) == fmt.Sprint(a) {
		t.Fatal("different seeds give the same corpus")
	}
	distinct := map[string]bool{}
	p := New()
	o := crawlkeeper.DateOptions{Now: time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)}
	failed := map[string]bool{}
	for _, s := range a {
		distinct[s] = true
		if _, err := p.ParseDate(s, o); err != nil {
			failed[s] = true
		}
	}
	// Crawls repeat strings; the corpus must too.
	if len(distinct) > len(a)*3/4 {
		t.Errorf("%d distinct strings in %d: too few repeats", len(distinct), len(a))
	}
	// Only the junk and an unreadable long-tail string may fail.
	allowed := map[string]bool{}
	for _, s := range corpusJunk {
		allowed[s] = true
	}
	for s := range failed {
		if !allowed[s] && s != "15 maj 2024 kl. 10:30" && s != "15 mai 2024 m." {
			t.Errorf("corpus string %q does not parse", s)
		}
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2024-05-15T10:30:00Z", "May 15–17, 2024", "15.05.2024 10:30", "令和元年5月1日", "2024년 5월 15일 오후 3시 30분",
		"3 days ago", "vor 3 Tagen", "۲۶ اردیبهشت ۱۴۰۳", "Wed, 15 May 2024 10:30:00 +0000 (UTC)", "R6.5.15", "1715769000123",
		"10:30-12:00", "GMT+2", "5/17", "Dec 30 – Jan 2", "昨日 10:30", "12345abc", "", "9999-12-31T23:59:59-14:00", "0001-01-01"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(0xff))
	}
	tokyo, ny := mustLoad(f, "Asia/Tokyo"), mustLoad(f, "America/New_York")
	p := New()
	f.Fuzz(func(t *testing.T, s string, flags uint8) {
		o := crawlkeeper.DateOptions{
			Location:   []*time.Location{time.UTC, tokyo, ny, time.UTC}[flags&3],
			Order:      []string{"", "DMY", "MDY", "YMD"}[flags>>2&3],
			RangeStart: flags&16 != 0,
			Now:        time.Date(2024, 5, 22, 15, 4, 5, 0, time.UTC).Add(time.Duration(flags>>5) * 7 * time.Hour),
		}
		d1, err1 := p.ParseDate(s, o)
		d2, err2 := p.ParseDate(s, o)
		if outcome(d1, err1) != outcome(d2, err2) {
			t.Fatalf("%q: %s, then %s", s, outcome(d1, err1), outcome(d2, err2))
		}
		if err1 != nil {
			if crawlkeeper.ErrorCode(err1) != crawlkeeper.EINVALID {
				t.Fatalf("%q: error code %q", s, crawlkeeper.ErrorCode(err1))
			}
			return
		}
		if y := d1.Time.Year(); y < 1 || y > 9999 {
			t.Fatalf("%q: year %d", s, y)
		}
	})
}

// TestLayoutsRoundTrip formats many instants with the layouts sites use and
// reads them back: the same instant for layouts with a zone, the same wall
// clock in the options' zone for layouts without one, the same day for
// date-only layouts.
func TestLayoutsRoundTrip(t *testing.T) {
	type layout struct {
		layout   string
		order    string
		hasZone  bool
		hasTime  bool
		noSecond bool
	}
	layouts := []layout{
		{layout: time.RFC1123, hasZone: true, hasTime: true},
		{layout: time.RFC1123Z, hasZone: true, hasTime: true},
		{layout: time.RFC850, hasZone: true, hasTime: true},
		{layout: time.RFC822Z, hasZone: true, hasTime: true, noSecond: true},
		{layout: time.ANSIC, hasTime: true},
		{layout: time.UnixDate, hasZone: true, hasTime: true},
		{layout: time.RubyDate, hasZone: true, hasTime: true},
		{layout: time.RFC3339, hasZone: true, hasTime: true},
		{layout: "2006-01-02 15:04:05", hasTime: true},
		{layout: "January 2, 2006"},
		{layout: "Jan 2, 2006"},
		{layout: "2 January 2006"},
		{layout: "Monday, January 2, 2006 3:04 PM", hasTime: true, noSecond: true},
		{layout: "Mon, 2 Jan 2006 15:04 -0700", hasZone: true, hasTime: true, noSecond: true},
		{layout: "02.01.2006", order: "DMY"},
		{layout: "02/01/2006", order: "DMY"},
		{layout: "01/02/2006", order: "MDY"},
		{layout: "01/02/06", order: "MDY"},
		{layout: "02-01-06", order: "DMY"},
		{layout: "2006/01/02 15:04", hasTime: true, noSecond: true},
		{layout: "2006年1月2日 15時04分", hasTime: true, noSecond: true},
		{layout: "2006년 1월 2일"},
		{layout: "20060102"},
	}
	p := New()
	tokyo := mustLoad(t, "Asia/Tokyo")
	zones := []*time.Location{time.UTC, tokyo, mustLoad(t, "America/New_York"), time.FixedZone("", -(9*3600 + 1800))}
	base := time.Date(1995, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 1500; i++ {
		u := base.Add(time.Duration(i) * 611953 * time.Second).Truncate(time.Second)
		z := zones[i%len(zones)]
		local := u.In(z)
		for _, l := range layouts {
			s := local.Format(l.layout)
			d, err := p.ParseDate(s, crawlkeeper.DateOptions{Location: z, Order: l.order})
			if err != nil {
				t.Fatalf("%s (%s): %v", s, l.layout, err)
			}
			want := local
			switch {
			case !l.hasTime:
				y, m, dd := local.Date()
				want = time.Date(y, m, dd, 0, 0, 0, 0, z)
			case l.noSecond:
				want = local.Truncate(time.Minute)
			}
			if l.hasZone && !d.Time.Equal(want) || !l.hasZone && d.Time.Format(time.DateTime) != want.Format(time.DateTime) || d.DateOnly == l.hasTime {
				t.Fatalf("%s (%s): got %s (date only %v), want %s", s, l.layout, d.Time.Format(time.RFC3339), d.DateOnly, want.Format(time.RFC3339))
			}
		}
	}
}

// TestFallbackCorpus checks that the fallback corpus of the benchmark is
// what it claims: text the hand-written parser does not read and the
// library does.
func TestFallbackCorpus(t *testing.T) {
	in := FallbackCorpus(2000, 3)
	distinct := map[string]bool{}
	for _, s := range in {
		distinct[s] = true
	}
	hand := NewWithOptions(Options{NoFallback: true})
	p := New()
	o := crawlkeeper.DateOptions{Now: time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)}
	n := 0
	for s := range distinct {
		if n++; raceEnabled && n > 40 {
			break
		}
		if _, err := hand.ParseDate(s, o); err == nil {
			t.Errorf("%q: the hand-written parser reads it", s)
		}
		if _, err := p.ParseDate(s, o); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}
