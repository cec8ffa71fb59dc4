package dates

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// readRelative reads dates relative to now: "yesterday", "yesterday
// 10:30", "3 days ago", "about an hour ago", "1 year, 2 months and 3 days
// ago", "in 2.5 hours", "15 hrs", "now - 2 hours", "yesterday +30m", "last
// Monday", "next decade" and their translations. Day forms are date-only
// at midnight of the day they name in the zone of the options; forms with
// hours, minutes, seconds or fractions of a day are instants.
func readRelative(lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	ts := lx.toks
	// The words and numbers that carry meaning, and the signs of
	// arithmetic ("now - 2 hours").
	var ms [16]int
	n := 0
	rel, sign := -1, -1
	for k := range ts {
		t := &ts[k]
		if t.kind == tSep {
			if (t.last == '+' || t.last == '-') && n > 0 && sign < 0 && k+1 < len(ts) && ts[k+1].kind == tNum {
				sign = n
			}
			continue
		}
		if t.kind == tWord && t.w != nil && t.w.kind == kFiller && t.w.kind2 == kNone {
			continue
		}
		if t.kind == tWord && t.w != nil && t.w.kind == kRelDay {
			if rel >= 0 {
				return crawlkeeper.ParsedDate{}, false
			}
			rel = k
		}
		if n == len(ms) {
			return crawlkeeper.ParsedDate{}, false
		}
		ms[n] = k
		n++
	}
	if n == 0 {
		return crawlkeeper.ParsedDate{}, false
	}
	if sign > 0 {
		if d, ok := arithmetic(lx, op, ms[:n], sign); ok {
			return d, true
		}
	}
	if rel >= 0 {
		return relDay(lx, op, ts[rel].w.val)
	}
	list := ms[:n]
	if n == 1 && isKind(lx, list[0], kNow) {
		return crawlkeeper.ParsedDate{Time: op.now}, true
	}
	if d, ok := amountAgo(lx, op, list); ok {
		return d, true
	}
	if n == 2 {
		return lastNext(lx, op, list)
	}
	// "next Friday at 3pm", "last Monday 10:30": the day, then its time.
	if d, ok := lastNext(lx, op, list[:2]); ok && d.DateOnly {
		sp := segParser{ts: lx.toks[list[1]+1:], buf: lx.buf, order: op.order}
		if sp.parse() && !sp.f.hasDate() && sp.f.hasTime {
			loc := op.loc
			if sp.f.hasZone {
				loc = sp.f.zone
			}
			y, m, dd := d.Time.Date()
			return crawlkeeper.ParsedDate{Time: time.Date(y, m, dd, sp.f.hh, sp.f.mm, sp.f.ss, sp.f.ns, loc)}, true
		}
	}
	return crawlkeeper.ParsedDate{}, false
}

// isKind reports whether token k is a word with role kd.
func isKind(lx *lexer, k int, kd kind) bool {
	t := &lx.toks[k]
	return t.kind == tWord && t.w != nil && t.w.is(kd)
}

// relDay reads "yesterday" alone or with a time of day.
func relDay(lx *lexer, op *opts, delta int) (crawlkeeper.ParsedDate, bool) {
	sp := segParser{ts: lx.toks, buf: lx.buf, order: op.order, skipRel: true}
	if !sp.parse() || sp.f.hasDate() {
		return crawlkeeper.ParsedDate{}, false
	}
	y, m, d := op.now.Date()
	if !sp.f.hasTime {
		return crawlkeeper.ParsedDate{Time: time.Date(y, m, d+delta, 0, 0, 0, 0, op.loc), DateOnly: true}, true
	}
	loc := op.loc
	if sp.f.hasZone {
		loc = sp.f.zone
	}
	f := &sp.f
	return crawlkeeper.ParsedDate{Time: time.Date(y, m, d+delta, f.hh, f.mm, f.ss, f.ns, loc)}, true
}

// span is an amount of time read from text: calendar months (a year is
// twelve), days and an exact duration, and whether any part was finer
// than a day.
type span struct {
	months, days int
	exact        time.Duration
	fine         bool
}

// unitSpans are the units as spans of one.
var unitSpans = [...]span{
	uSecond:  {exact: time.Second, fine: true},
	uMinute:  {exact: time.Minute, fine: true},
	uHour:    {exact: time.Hour, fine: true},
	uDay:     {days: 1},
	uWeek:    {days: 7},
	uMonth:   {months: 1},
	uYear:    {months: 12},
	uDecade:  {months: 120},
	uCentury: {months: 1200},
}

// durations reads a list of amounts and units from the meaningful tokens
// ms ("1 year, 2 months and 3 days", "1h30m", "2.5 hours", "an hour"). It
// returns false unless every token is used.
func durations(lx *lexer, ms []int) (span, bool) {
	var sp span
	ts := lx.toks
	pairs := 0
	for i := 0; i < len(ms); {
		t := &ts[ms[i]]
		// "and", "y", "e" between pairs, before the next amount.
		if pairs > 0 && t.kind == tWord && t.w != nil && t.w.is(kFiller) && i+1 < len(ms) {
			if nx := &ts[ms[i+1]]; nx.kind == tNum || nx.kind == tWord && nx.w != nil && nx.w.is(kCount) {
				i++
				continue
			}
		}
		amount, frac, used, ok := amountAt(lx, ms, i)
		if !ok {
			return span{}, false
		}
		i += used
		if i >= len(ms) {
			return span{}, false
		}
		u := &ts[ms[i]]
		if u.kind != tWord || u.w == nil || !u.w.is(kUnit) {
			return span{}, false
		}
		unit := u.w.valOf(kUnit)
		if unit <= 0 || unit >= len(unitSpans) || amount > maxShift {
			return span{}, false
		}
		us := unitSpans[unit]
		sp.months += amount * us.months
		sp.days += amount * us.days
		sp.exact += time.Duration(amount) * us.exact
		sp.fine = sp.fine || us.fine
		if frac > 0 {
			// A fraction of a unit: exact for days and finer, thirty days
			// a month for the rest.
			part := time.Duration(frac * float64(us.exact+time.Duration(us.days)*24*time.Hour+time.Duration(us.months)*30*24*time.Hour))
			sp.exact += part
			sp.fine = true
		}
		i++
		pairs++
	}
	return sp, pairs > 0
}

// amountAt reads the amount at ms[i]: a number with an optional decimal
// fraction ("2.5", "0,5"), a number word, or nothing before a unit (an
// amount of one, as in "неделю назад"). It returns how many meaningful
// tokens it used.
func amountAt(lx *lexer, ms []int, i int) (amount int, frac float64, used int, ok bool) {
	ts := lx.toks
	t := &ts[ms[i]]
	switch {
	case t.kind == tNum && t.nd <= 5:
		amount = int(t.v)
		k := ms[i]
		// 2.5 or 0,5: a separator of one '.' or ',' and digits right after.
		if k+2 < len(ts) && i+1 < len(ms) && ms[i+1] == k+2 && ts[k+1].kind == tSep && !ts[k+1].multi && !ts[k+1].spB && !ts[k+1].spA &&
			(ts[k+1].c == '.' || ts[k+1].c == ',') && ts[k+2].kind == tNum && ts[k+2].nd <= 3 {
			f := float64(ts[k+2].v)
			for range ts[k+2].nd {
				f /= 10
			}
			return amount, f, 2, true
		}
		return amount, 0, 1, true
	case t.kind == tWord && t.w != nil && t.w.is(kCount) && !(t.w.is(kUnit) && i+1 == len(ms)):
		return t.w.valOf(kCount), 0, 1, true
	case t.kind == tWord && t.w != nil && t.w.is(kUnit):
		if t.w.is(kCount) {
			// A unit in the dual: "قبل يومين", two days ago.
			return t.w.valOf(kCount), 0, 0, true
		}
		return 1, 0, 0, true
	}
	return 0, 0, 0, false
}

// amountAgo reads amounts of units before or after now: "3 days ago",
// "vor 3 Tagen", "in 2 weeks", "3日前", "неделю назад" (an unwritten
// amount is one), "1 year, 2 months and 3 days ago". Without a direction
// ("15 hrs", "3 days") the amount lies in the past, as sites showing the
// age of a post mean it, or in the future for upcoming dates (a deadline
// "3 days" away).
func amountAgo(lx *lexer, op *opts, list []int) (crawlkeeper.ParsedDate, bool) {
	n := len(list)
	ts := lx.toks
	dir := 0
	first, last := ts[list[0]].w, ts[list[n-1]].w
	body := list
	switch {
	case first != nil && ts[list[0]].kind == tWord && (first.is(kPrePast) || first.is(kPreFuture)) && n >= 2:
		dir = 1
		if first.is(kPrePast) {
			dir = -1
		}
		body = list[1:]
	case last != nil && ts[list[n-1]].kind == tWord && (last.is(kAgo) || last.is(kLater)) && n >= 2:
		dir = 1
		if last.is(kAgo) {
			dir = -1
		}
		body = list[:n-1]
	}
	if dir == 0 {
		// No direction: at least one written amount, so that a unit word
		// alone ("second", "min") is no date, and no direction word out of
		// its place.
		for _, k := range list {
			if w := ts[k].w; ts[k].kind == tWord && w != nil && (w.is(kAgo) || w.is(kLater) || w.is(kPrePast) || w.is(kPreFuture)) {
				return crawlkeeper.ParsedDate{}, false
			}
		}
		if ts[list[0]].kind != tNum && !(ts[list[0]].w != nil && ts[list[0]].w.is(kCount)) {
			return crawlkeeper.ParsedDate{}, false
		}
		for _, k := range list {
			if w := ts[k].w; ts[k].kind == tWord && w != nil && w.weak {
				return crawlkeeper.ParsedDate{}, false
			}
		}
		// CJK units double as markers: "15日" is the 15th, not 15 days.
		for _, k := range list {
			if w := ts[k].w; ts[k].kind == tWord && w != nil && (w.is(kMarkY) || w.is(kMarkM) || w.is(kMarkD) || w.is(kMarkH) || w.is(kMarkMin) || w.is(kMarkS)) {
				return crawlkeeper.ParsedDate{}, false
			}
		}
		dir = -1
		if op.upcoming {
			dir = 1
		}
	}
	sp, ok := durations(lx, body)
	if !ok {
		return crawlkeeper.ParsedDate{}, false
	}
	return applySpan(op, op.now, sp, dir)
}

// arithmetic reads "now - 2 hours", "now+1d", "yesterday +30m", "today
// + 3 days": a base, a sign and amounts of units. A day base keeps the
// time of now, so that finer units move from the present moment.
func arithmetic(lx *lexer, op *opts, ms []int, sign int) (crawlkeeper.ParsedDate, bool) {
	if sign != 1 {
		return crawlkeeper.ParsedDate{}, false
	}
	b := &lx.toks[ms[0]]
	if b.kind != tWord || b.w == nil || (b.w.kind != kNow && b.w.kind != kRelDay) {
		return crawlkeeper.ParsedDate{}, false
	}
	// The sign is the last '+' or '-' of the separator before the amount.
	dir := 1
	for k := ms[0] + 1; k < ms[1]; k++ {
		if t := &lx.toks[k]; t.kind == tSep && t.last == '-' {
			dir = -1
		}
	}
	sp, ok := durations(lx, ms[1:])
	if !ok {
		return crawlkeeper.ParsedDate{}, false
	}
	base := op.now
	if b.w.kind == kRelDay {
		base = op.now.AddDate(0, 0, b.w.val)
	}
	return applySpan(op, base, sp, dir)
}

// applySpan moves base by sp in direction dir. Spans of whole days or
// longer name a day (date-only); finer ones an instant. A month shift that
// lands past the end of a month keeps to its last day (one month before
// 31 May is 30 April).
func applySpan(op *opts, base time.Time, sp span, dir int) (crawlkeeper.ParsedDate, bool) {
	y, m, d := base.Date()
	months := int(m) - 1 + dir*sp.months
	yy := y + floorDiv(months, 12)
	mm := time.Month(months - 12*floorDiv(months, 12) + 1)
	dd := min(d, daysIn(max(yy, 1), int(mm)))
	if yy < 1 || yy > 9999 {
		return crawlkeeper.ParsedDate{}, false
	}
	hh, mi, ss := base.Clock()
	t := time.Date(yy, mm, dd+dir*sp.days, hh, mi, ss, base.Nanosecond(), base.Location())
	if sp.fine {
		t = t.Add(time.Duration(dir) * sp.exact)
		if t.Year() < 1 || t.Year() > 9999 {
			return crawlkeeper.ParsedDate{}, false
		}
		return crawlkeeper.ParsedDate{Time: t}, true
	}
	y, m, d = t.Date()
	t = time.Date(y, m, d, 0, 0, 0, 0, op.loc)
	if t.Year() < 1 || t.Year() > 9999 {
		return crawlkeeper.ParsedDate{}, false
	}
	return crawlkeeper.ParsedDate{Time: t, DateOnly: true}, true
}

// lastNext reads "last Monday", "next Friday", "this Friday", "lundi
// dernier", "next week", "last decade". Last Monday is the latest Monday
// before today, next Friday the first Friday after today, whatever today
// is; this Friday is the Friday of the days to come, today included.
func lastNext(lx *lexer, op *opts, list []int) (crawlkeeper.ParsedDate, bool) {
	a, b := lx.toks[list[0]].w, lx.toks[list[1]].w
	if a == nil || b == nil || lx.toks[list[0]].kind != tWord || lx.toks[list[1]].kind != tWord {
		return crawlkeeper.ParsedDate{}, false
	}
	dirWord, other := a, b
	if !a.is(kLast) && !a.is(kNext) && !a.is(kThis) {
		dirWord, other = b, a
	}
	dir := 0
	switch {
	case dirWord.is(kLast):
		dir = -1
	case dirWord.is(kNext):
		dir = 1
	case dirWord.is(kThis):
	default:
		return crawlkeeper.ParsedDate{}, false
	}
	y, m, d := op.now.Date()
	switch {
	case other.kind == kWeekday || other.kind2 == kWeekday:
		wd := other.valOf(kWeekday)
		today := int(op.now.Weekday())
		var delta int
		switch dir {
		case -1:
			delta = -((today - wd + 7) % 7)
			if delta == 0 {
				delta = -7
			}
		case 1:
			delta = (wd - today + 7) % 7
			if delta == 0 {
				delta = 7
			}
		default:
			delta = (wd - today + 7) % 7
		}
		return crawlkeeper.ParsedDate{Time: time.Date(y, m, d+delta, 0, 0, 0, 0, op.loc), DateOnly: true}, true
	case other.is(kUnit):
		u := other.valOf(kUnit)
		if u <= 0 || u >= len(unitSpans) {
			return crawlkeeper.ParsedDate{}, false
		}
		return applySpan(op, op.now, unitSpans[u], dir)
	}
	return crawlkeeper.ParsedDate{}, false
}

// maxShift bounds relative amounts so that arithmetic cannot overflow and
// nonsense ("99999 years ago") is refused.
const maxShift = 100000
