package dates

import (
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	dps "github.com/markusmobius/go-dateparser"
	"github.com/markusmobius/go-dateparser/date"
)

// fallback reads, through github.com/markusmobius/go-dateparser, the
// languages and forms the hand-written parser does not know. A library
// Parser serialises its own calls and each costs a fraction of a
// millisecond to tens of milliseconds, so the fallback keeps a pool of
// them (one per core) and runs only for text the hand-written parser
// could not read, with its answers remembered (see cache.go) in a form
// that does not depend on now (see reading.go).
type fallback struct {
	pool  chan *dps.Parser
	calls atomic.Int64 // library calls, for tests
}

func newFallback() *fallback {
	n := runtime.GOMAXPROCS(0)
	f := &fallback{pool: make(chan *dps.Parser, n)}
	for range n {
		f.pool <- &dps.Parser{}
	}
	return f
}

// viaFallback reads s with the library, through the cache.
func (p *Parser) viaFallback(s string, lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	hints := languageHints(op)
	key := cacheKey{s: s, loc: op.loc.String(), hints: strings.Join(hints, ","), order: op.order, explicit: op.orderExplicit}
	r, ok := reading{}, false
	if !p.noCache {
		r, ok = p.cache.get(key)
	}
	if !ok {
		r = p.fallback.read(s, lx, op, hints)
		if !p.noCache {
			p.cache.put(key, r)
		}
	}
	if r.kind == rLive {
		r = p.fallback.read(s, lx, op, hints)
	}
	return r.resolve(op)
}

// Three moments the library reads a string against. The text's reading
// depends on now when the answers differ; a reading that depends on now
// is remembered only when one shape (reading.go) reproduces all three, so
// the second and third are chosen to tell the shapes apart: days from
// weeks and months (months of unequal length), weekdays from day counts.
var (
	probe2 = 3*24*time.Hour + 7*time.Hour + 11*time.Minute
	probe3 = -(61*24*time.Hour + 5*time.Hour + 23*time.Minute)
)

// read asks the library and turns a reading that passes the guard into a
// reading that can be remembered.
func (f *fallback) read(s string, lx *lexer, op *opts, hints []string) reading {
	hinted := len(hints) > 0
	if !hinted && !lx.hasDigit && !strongWord(lx) {
		return reading{} // refused below whatever the library says: do not ask
	}
	r1, ok := f.call(s, op, op.now, hints)
	if !ok && hinted {
		// Sites mix languages: an English "3 days ago" on a German page.
		r1, ok = f.call(s, op, op.now, nil)
		hinted = false
	}
	if !ok {
		return reading{}
	}
	if !lx.unknown && !lx.weak && tableLanguages[baseLanguage(r1.Locale)] {
		return reading{} // see tableLanguages; a weak word's refusal is caution, not knowledge
	}
	// Without a hint for the language read, a reading without numbers or
	// relative to now needs a word that can carry it (see strongWord).
	weak := !hinted && !strongWord(lx)
	// Without a year, an unhinted reading needs a word of four letters
	// or more: "15 pro" is no 15 December.
	short := !hinted && !longWord(lx)
	if weak && !lx.hasDigit {
		return reading{}
	}
	var used []string
	if hinted {
		used = hints
	}
	// A reading that writes its year and explains every number is a date
	// whatever now is: no probe needed.
	if y := r1.Time.Year(); r1.Period <= date.Day && lx.hasDigit && (writesYear(lx, y) || writesYear(lx, y+543)) && explains(lx, r1.Time) {
		return f.absolute(lx, op, r1, hinted, weak, short)
	}
	n2 := op.now.Add(probe2)
	r2, ok := f.call(s, op, n2, used)
	if !ok {
		return reading{}
	}
	if r2.Period == r1.Period && r2.Time.Equal(r1.Time) {
		return f.absolute(lx, op, r1, hinted, weak, short)
	}
	if weak {
		return reading{}
	}
	// The third moment is asked only when the first two leave more than
	// one shape.
	return relative(lx, op, [3]date.Date{r1, r2}, [3]time.Time{op.now, n2}, func() (date.Date, time.Time, bool) {
		n3 := op.now.Add(probe3)
		r3, ok := f.call(s, op, n3, used)
		return r3, n3, ok
	})
}

// baseLanguage returns the language of a locale name ("pt-BR" -> "pt").
func baseLanguage(locale string) string {
	if i := strings.IndexByte(locale, '-'); i > 0 {
		return locale[:i]
	}
	return locale
}

// call runs the library against now, turning its panics on odd input into
// failures. Dates without a day of the month ("February 2015") take the
// first day, so that their reading does not change with now.
func (f *fallback) call(s string, op *opts, now time.Time, hints []string) (d date.Date, ok bool) {
	libraryUsed()
	var langs []string
	for _, h := range hints {
		if dps.IsKnownLocale(h) {
			langs = append(langs, h)
		}
	}
	if len(hints) > 0 && len(langs) == 0 {
		return date.Date{}, false
	}
	cfg := &dps.Configuration{
		Languages:           langs,
		CurrentTime:         now,
		DefaultTimezone:     op.loc,
		ReturnTimeAsPeriod:  true,
		PreferredDayOfMonth: dps.First,
	}
	if op.orderExplicit {
		switch op.order {
		case 'M':
			cfg.DateOrder = dps.MDY
		case 'Y':
			cfg.DateOrder = dps.YMD
		default:
			cfg.DateOrder = dps.DMY
		}
	}
	f.calls.Add(1)
	lib := <-f.pool
	defer func() {
		f.pool <- lib
		if r := recover(); r != nil {
			d, ok = date.Date{}, false
		}
	}()
	d, err := lib.Parse(cfg, s)
	if err != nil || d.IsZero() || d.Time.Year() < 1 || d.Time.Year() > 9999 {
		return date.Date{}, false
	}
	return d, true
}

// absolute checks a reading that does not depend on now and returns it as
// a day, an instant or a month. Weak text (no word that can carry a date
// by itself) must write its year.
func (f *fallback) absolute(lx *lexer, op *opts, r date.Date, hinted, weak, short bool) reading {
	t := r.Time
	switch {
	case r.Period == date.Month:
		// A month, with or without its year: every number is the year.
		for _, tk := range lx.toks {
			if tk.kind == tNum && (tk.nd != 4 || int(tk.v) != t.Year()) {
				return reading{}
			}
		}
		y := t.Year()
		if !writesYear(lx, y) {
			// A month name alone is read only in a language the source
			// was hinted to use: unhinted, a word that is a month in some
			// language is far more often a name ("Augusta", "Marc") or a
			// word of another ("Mars", "march").
			if short || !hinted {
				return reading{}
			}
			y = 0
		}
		return reading{kind: rMonth, y: y, m: int(t.Month())}
	case r.Period > date.Day:
		return reading{} // a year alone is a number, not a date
	}
	buddhist := false
	if strings.HasPrefix(r.Locale, "th") && t.Year() > 2400 && writesYear(lx, t.Year()) {
		// Thai sites count years in the Buddhist era, 543 years ahead.
		t, buddhist = t.AddDate(-543, 0, 0), true
	}
	if t.Year() < 1 || t.Year() > 9999 || !explains(lx, t) {
		return reading{}
	}
	yearWritten := buddhist || writesYear(lx, t.Year())
	if !yearWritten && (weak || short || !monthWordPossible(lx)) {
		return reading{}
	}
	if !yearWritten {
		if t.Year() != op.now.In(t.Location()).Year() {
			// A year from nowhere: neither written nor now's.
			return reading{}
		}
		rd := reading{kind: rYearless, m: int(t.Month()), day: t.Day()}
		if r.Period.IsTime() {
			rd.hasTime, rd.hh, rd.mm, rd.ss = true, t.Hour(), t.Minute(), t.Second()
			rd.zone = t.Location()
		}
		return rd
	}
	if r.Period == date.Day {
		y, m, d := t.Date()
		return reading{kind: rFixed, d: crawlkeeper.ParsedDate{Time: time.Date(y, m, d, 0, 0, 0, 0, t.Location()), DateOnly: true}}
	}
	return reading{kind: rFixed, d: crawlkeeper.ParsedDate{Time: t}}
}

// relative finds the shape of a reading that depends on now, from the
// library's answers rs against the moments ns. Amounts are small numbers;
// text with numbers must move away from now.
func relative(lx *lexer, op *opts, rs [3]date.Date, ns [3]time.Time, third func() (date.Date, time.Time, bool)) reading {
	nums := 0
	for _, t := range lx.toks {
		if t.kind == tNum {
			// Amounts are small; a year in the text ("15 મે, 2024") means the
			// library read a date as something relative.
			if nums++; t.nd > 3 || nums > 4 {
				return reading{}
			}
		}
	}
	if lx.hasDigit && rs[0].Time.Equal(ns[0]) {
		return reading{} // "No. 7" read as "now": the number is left over
	}
	var fit []reading
	for _, c := range candidates(op, rs[0], ns[0]) {
		if matches(&c, op, rs[:2], ns[:2]) {
			fit = append(fit, c)
		}
	}
	switch len(fit) {
	case 0:
		return reading{kind: rLive}
	case 1:
		return fit[0]
	}
	r3, n3, ok := third()
	if !ok {
		return reading{}
	}
	rs[2], ns[2] = r3, n3
	for _, c := range fit {
		if matches(&c, op, rs[:], ns[:]) {
			return c
		}
	}
	return reading{kind: rLive}
}

// candidates lists the shapes that reproduce r read against now.
func candidates(op *opts, r date.Date, now time.Time) []reading {
	loc := op.loc
	rt := r.Time.In(loc)
	nt := now.In(loc)
	days := dayNumber(rt) - dayNumber(nt)
	var cs []reading
	if r.Period.IsTime() {
		cs = append(cs, reading{kind: rDur, dur: r.Time.Sub(now)})
		clock := reading{hasTime: true, hh: rt.Hour(), mm: rt.Minute(), ss: rt.Second()}
		c := clock
		c.kind, c.n = rDays, days
		cs = append(cs, c)
		c = clock
		c.kind, c.wd = rWeekday, rt.Weekday()
		cs = append(cs, c)
		return cs
	}
	months := (rt.Year()-nt.Year())*12 + int(rt.Month()) - int(nt.Month())
	if months != 0 {
		cs = append(cs, reading{kind: rMonths, n: months})
	}
	cs = append(cs, reading{kind: rDays, n: days})
	if days >= -6 && days <= 0 {
		cs = append(cs, reading{kind: rWeekday, wd: rt.Weekday()})
	}
	return cs
}

// matches reports whether c, resolved against each moment, gives the
// library's answer: the same instant for times, the same day otherwise.
// Weekdays are checked as the library reads them, in the past.
func matches(c *reading, op *opts, rs []date.Date, ns []time.Time) bool {
	for i := range rs {
		o := *op
		o.now = ns[i].In(op.loc)
		o.upcoming = false
		got, ok := c.resolve(&o)
		if !ok {
			return false
		}
		if rs[i].Period.IsTime() {
			if !got.Time.Equal(rs[i].Time) {
				return false
			}
			continue
		}
		gy, gm, gd := got.Time.In(op.loc).Date()
		wy, wm, wd := rs[i].Time.In(op.loc).Date()
		if gy != wy || gm != wm || gd != wd {
			return false
		}
	}
	return true
}

// dayNumber counts days from a fixed origin to t's date.
func dayNumber(t time.Time) int {
	y, m, d := t.Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// explains reports whether every number written in the text is a part of
// t and the day is among them. The library skips what it does not
// understand; a reading that leaves numbers unexplained read something
// other than the text.
func explains(lx *lexer, t time.Time) bool {
	y, m, d := t.Date()
	if !writesYear(lx, y) && writesYear(lx, y+543) {
		y += 543
	}
	hh, mm, ss := t.Clock()
	day := false
	for _, tk := range lx.toks {
		if tk.kind != tNum {
			continue
		}
		v := int(tk.v)
		if tk.nd > 4 {
			return false
		}
		switch {
		case v == d && tk.nd <= 2:
			day = true
		case v == y, tk.nd == 2 && v == y%100, v == int(m) && tk.nd <= 2,
			v == hh, v == hh%12, hh%12 == 0 && v == 12, v == mm, v == ss:
		default:
			return false
		}
	}
	return day
}

// writesYear reports whether the text writes year y.
func writesYear(lx *lexer, y int) bool {
	for _, tk := range lx.toks {
		if tk.kind == tNum && (int(tk.v) == y && tk.nd == 4 || tk.nd == 2 && int(tk.v) == y%100) {
			return true
		}
	}
	return false
}
