package dates

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// readRelative reads dates relative to now: "yesterday", "yesterday
// 10:30", "3 days ago", "in 2 weeks", "last Monday" and their translations.
// Day forms are date-only at midnight of the day they name in the zone of
// the options; hour, minute and second forms are instants.
func readRelative(lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	ts := lx.toks
	// The words and numbers that carry meaning.
	var ms [6]*token
	n := 0
	rel := -1
	for k := range ts {
		t := &ts[k]
		if t.kind == tSep || t.kind == tWord && t.w != nil && t.w.kind == kFiller && t.w.kind2 == kNone {
			continue
		}
		if t.kind == tWord && t.w != nil && t.w.kind == kRelDay {
			if rel >= 0 {
				return crawlkeeper.ParsedDate{}, false
			}
			rel = k
		}
		if n < len(ms) {
			ms[n] = t
		}
		n++
	}
	if rel >= 0 {
		return relDay(lx, op, ts[rel].w.val)
	}
	if n > len(ms) || n == 0 {
		return crawlkeeper.ParsedDate{}, false
	}
	list := ms[:n]
	if n == 1 && list[0].kind == tWord && list[0].w != nil && list[0].w.kind == kNow {
		return crawlkeeper.ParsedDate{Time: op.now}, true
	}
	if d, ok := amountAgo(list, op); ok {
		return d, true
	}
	if n == 2 {
		return lastNext(list, op)
	}
	return crawlkeeper.ParsedDate{}, false
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

// amountAgo reads an amount of a unit before or after now: "3 days ago",
// "vor 3 Tagen", "in 2 weeks", "3日前", "неделю назад" (an unwritten
// amount is one).
func amountAgo(list []*token, op *opts) (crawlkeeper.ParsedDate, bool) {
	n := len(list)
	if n < 2 || n > 3 {
		return crawlkeeper.ParsedDate{}, false
	}
	dir := 0
	var amountTok, unitTok *token
	first, last := list[0].w, list[n-1].w
	switch {
	case first != nil && (first.is(kPrePast) || first.is(kPreFuture)):
		dir = 1
		if first.is(kPrePast) {
			dir = -1
		}
		unitTok = list[n-1]
		if n == 3 {
			amountTok = list[1]
		}
	case last != nil && (last.is(kAgo) || last.is(kLater)):
		dir = 1
		if last.is(kAgo) {
			dir = -1
		}
		unitTok = list[n-2]
		if n == 3 {
			amountTok = list[0]
		}
	default:
		return crawlkeeper.ParsedDate{}, false
	}
	if unitTok.kind != tWord || unitTok.w == nil || !unitTok.w.is(kUnit) {
		return crawlkeeper.ParsedDate{}, false
	}
	unit := unitTok.w.valOf(kUnit)
	amount := 1
	if amountTok != nil {
		switch {
		case amountTok.kind == tNum && amountTok.nd <= 5:
			amount = int(amountTok.v)
		case amountTok.kind == tWord && amountTok.w != nil && amountTok.w.is(kCount):
			amount = amountTok.w.valOf(kCount)
		default:
			return crawlkeeper.ParsedDate{}, false
		}
	}
	return shift(op, unit, dir*amount)
}

// lastNext reads "last Monday", "next Friday", "lundi dernier", "next
// week". Last Monday is the latest Monday before today, next Friday the
// first Friday after today, whatever today is.
func lastNext(list []*token, op *opts) (crawlkeeper.ParsedDate, bool) {
	a, b := list[0].w, list[1].w
	if a == nil || b == nil {
		return crawlkeeper.ParsedDate{}, false
	}
	dirWord, other := a, b
	if !a.is(kLast) && !a.is(kNext) {
		dirWord, other = b, a
	}
	dir := 0
	switch {
	case dirWord.is(kLast):
		dir = -1
	case dirWord.is(kNext):
		dir = 1
	default:
		return crawlkeeper.ParsedDate{}, false
	}
	y, m, d := op.now.Date()
	switch {
	case other.kind == kWeekday:
		today := int(op.now.Weekday())
		delta := (today - other.val + 7) % 7
		if dir > 0 {
			delta = (other.val - today + 7) % 7
		}
		if delta == 0 {
			delta = 7
		}
		return crawlkeeper.ParsedDate{Time: time.Date(y, m, d+dir*delta, 0, 0, 0, 0, op.loc), DateOnly: true}, true
	case other.is(kUnit):
		return shift(op, other.valOf(kUnit), dir)
	}
	return crawlkeeper.ParsedDate{}, false
}

// maxShift bounds relative amounts so that arithmetic cannot overflow and
// nonsense ("99999 years ago") is refused.
const maxShift = 100000

// shift moves now by n units. Day, week, month and year shifts name a day;
// a month shift that lands past the end of a month keeps to its last day
// (one month before 31 May is 30 April).
func shift(op *opts, unit, n int) (crawlkeeper.ParsedDate, bool) {
	if n > maxShift || n < -maxShift {
		return crawlkeeper.ParsedDate{}, false
	}
	now := op.now
	switch unit {
	case uSecond:
		return crawlkeeper.ParsedDate{Time: now.Add(time.Duration(n) * time.Second)}, true
	case uMinute:
		return crawlkeeper.ParsedDate{Time: now.Add(time.Duration(n) * time.Minute)}, true
	case uHour:
		return crawlkeeper.ParsedDate{Time: now.Add(time.Duration(n) * time.Hour)}, true
	}
	y, m, d := now.Date()
	switch unit {
	case uDay:
		d += n
	case uWeek:
		d += 7 * n
	case uMonth, uYear:
		if unit == uYear {
			n *= 12
		}
		months := int(m) - 1 + n
		y += months / 12
		months %= 12
		if months < 0 {
			months += 12
			y--
		}
		m = time.Month(months + 1)
		if last := daysIn(y, int(m)); d > last {
			d = last
		}
	default:
		return crawlkeeper.ParsedDate{}, false
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, op.loc)
	if t.Year() < 1 || t.Year() > 9999 {
		return crawlkeeper.ParsedDate{}, false
	}
	return crawlkeeper.ParsedDate{Time: t, DateOnly: true}, true
}
