package dates

import (
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	dps "github.com/markusmobius/go-dateparser"
	"github.com/markusmobius/go-dateparser/date"
)

// fallback reads, through github.com/markusmobius/go-dateparser, the
// languages and forms the hand-written parser does not know. The library
// costs about two milliseconds a call and serialises calls, so it runs only
// for text the hand-written parser cannot read, with its answers cached.
// Absolute and relative readings use separate library parsers so that the
// caller knows whether an answer depends on the current time.
type fallback struct {
	abs, rel *dps.Parser
}

func newFallback() *fallback {
	return &fallback{
		abs: &dps.Parser{ParserTypes: []dps.ParserType{dps.AbsoluteTime}},
		rel: &dps.Parser{ParserTypes: []dps.ParserType{dps.RelativeTime}},
	}
}

// viaFallback reads s with the library, through the cache.
func (p *Parser) viaFallback(s string, lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	hints := languageHints(op)
	key := cacheKey{s: s, loc: op.loc.String(), hints: strings.Join(hints, ","), order: op.order, start: op.rangeStart}
	if e, ok := p.cache.get(key); ok {
		switch {
		case e.relative:
			return p.fallback.relative(s, lx, op, hints)
		case !e.yearDep:
			return e.d, e.ok
		}
		yk := key
		yk.year = op.now.Year()
		if e, ok := p.cache.get(yk); ok {
			return e.d, e.ok
		}
	}
	d, yearDep, ok := p.fallback.absolute(s, lx, op, hints)
	if ok {
		if yearDep {
			p.cache.put(key, cacheEntry{yearDep: true})
			key.year = op.now.Year()
		}
		p.cache.put(key, cacheEntry{d: d, ok: true})
		return d, true
	}
	if d, ok := p.fallback.relative(s, lx, op, hints); ok {
		p.cache.put(key, cacheEntry{relative: true})
		return d, true
	}
	p.cache.put(key, cacheEntry{})
	return crawlkeeper.ParsedDate{}, false
}

func (f *fallback) config(op *opts, hints []string) *dps.Configuration {
	var langs []string
	for _, h := range hints {
		if dps.IsKnownLocale(h) {
			langs = append(langs, h)
		}
	}
	order := dps.DMY
	switch op.order {
	case 'M':
		order = dps.MDY
	case 'Y':
		order = dps.YMD
	}
	return &dps.Configuration{
		Languages:          langs,
		DateOrder:          order,
		CurrentTime:        op.now,
		DefaultTimezone:    op.loc,
		ReturnTimeAsPeriod: true,
	}
}

// call runs the library, turning its panics on odd input into failures.
func call(p *dps.Parser, cfg *dps.Configuration, s string) (d date.Date, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = date.Date{}, errPanic
		}
	}()
	return p.Parse(cfg, s)
}

var errPanic = crawlkeeper.Errorf(crawlkeeper.EINTERNAL, "date library panicked")

// absolute reads an absolute date. yearDep reports that the text had no
// year and the library took it from now.
func (f *fallback) absolute(s string, lx *lexer, op *opts, hints []string) (d crawlkeeper.ParsedDate, yearDep, ok bool) {
	cfg := f.config(op, hints)
	cfg.RequiredParts = []string{"day", "month"}
	r, err := call(f.abs, cfg, s)
	if err != nil || r.IsZero() || r.Period > date.Day {
		return d, false, false
	}
	t := r.Time
	buddhist := false
	if strings.HasPrefix(r.Locale, "th") && t.Year() > 2400 && writesYear(lx, t.Year()) {
		// Thai sites count years in the Buddhist era, 543 years ahead.
		t, buddhist = t.AddDate(-543, 0, 0), true
	}
	if t.Year() < 1 || t.Year() > 9999 || !explains(lx, t) {
		return d, false, false
	}
	yearDep = !buddhist && !writesYear(lx, t.Year())
	if yearDep && t.Year() != op.now.In(t.Location()).Year() {
		// A year from nowhere: neither written nor now's.
		return d, false, false
	}
	if r.Period == date.Day {
		y, m, dd := t.Date()
		return crawlkeeper.ParsedDate{Time: time.Date(y, m, dd, 0, 0, 0, 0, t.Location()), DateOnly: true}, yearDep, true
	}
	return crawlkeeper.ParsedDate{Time: t}, yearDep, true
}

// relative reads a relative date against now.
func (f *fallback) relative(s string, lx *lexer, op *opts, hints []string) (crawlkeeper.ParsedDate, bool) {
	for _, t := range lx.toks {
		// Amounts in relative dates are small numbers.
		if t.kind == tNum && t.nd > 4 {
			return crawlkeeper.ParsedDate{}, false
		}
	}
	r, err := call(f.rel, f.config(op, hints), s)
	if err != nil || r.IsZero() || r.Period > date.Day || r.Time.Year() < 1 || r.Time.Year() > 9999 {
		return crawlkeeper.ParsedDate{}, false
	}
	if r.Period == date.Day {
		y, m, d := r.Time.In(op.loc).Date()
		return crawlkeeper.ParsedDate{Time: time.Date(y, m, d, 0, 0, 0, 0, op.loc), DateOnly: true}, true
	}
	return crawlkeeper.ParsedDate{Time: r.Time}, true
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
