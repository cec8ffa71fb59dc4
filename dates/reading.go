package dates

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// rkind is the shape of a remembered reading.
type rkind uint8

const (
	rNone     rkind = iota // not a date
	rFixed                 // an instant or a day that does not depend on now
	rYearless              // a month and day (and time) in the year of now
	rMonth                 // a whole month: its first or last day by the options
	rDur                   // now plus a duration: an instant
	rDays                  // today plus n days: a day, or an instant at a written time
	rMonths                // today plus n months (a year is twelve): a day
	rWeekday               // the nearest day with a weekday: a day, or an instant at a written time
	rLive                  // relative in a way no shape above reproduces: ask the library each time
)

// reading is a date read from text in a form that does not depend on the
// moment of reading, so that the fallback's answers can be remembered and
// applied to any now: "vor 3 Tagen" is remembered as "three days before
// today", not as the day it was when first read.
type reading struct {
	kind       rkind
	d          crawlkeeper.ParsedDate // rFixed
	y, m, day  int                    // rYearless (m, day), rMonth (y = 0 for the year of now)
	n          int                    // rDays, rMonths
	wd         time.Weekday           // rWeekday
	dur        time.Duration          // rDur
	hasTime    bool                   // rYearless, rDays, rWeekday: a written time of day
	hh, mm, ss int
	zone       *time.Location // rYearless: a written zone; nil for the options' zone
}

// resolve applies the reading to the options' now and zone.
func (r *reading) resolve(op *opts) (crawlkeeper.ParsedDate, bool) {
	now := op.now
	y, m, d := now.Date()
	var t time.Time
	switch r.kind {
	case rFixed:
		return r.d, true
	case rYearless:
		loc := op.loc
		if r.zone != nil {
			loc = r.zone
		}
		yy := now.In(loc).Year()
		if r.day > daysIn(yy, r.m) {
			return crawlkeeper.ParsedDate{}, false // 29 February in a common year
		}
		return atClock(time.Date(yy, time.Month(r.m), r.day, 0, 0, 0, 0, loc), r), true
	case rMonth:
		return monthReading(r.y, r.m, op), true
	case rDur:
		return crawlkeeper.ParsedDate{Time: now.Add(r.dur)}, true
	case rDays:
		t = time.Date(y, m, d+r.n, 0, 0, 0, 0, op.loc)
	case rMonths:
		months := int(m) - 1 + r.n
		yy := y + floorDiv(months, 12)
		mm := time.Month(months - 12*floorDiv(months, 12) + 1)
		dd := min(d, daysIn(yy, int(mm)))
		t = time.Date(yy, mm, dd, 0, 0, 0, 0, op.loc)
	case rWeekday:
		t = nearestWeekday(op, r.wd)
	default:
		return crawlkeeper.ParsedDate{}, false
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return crawlkeeper.ParsedDate{}, false
	}
	return atClock(t, r), true
}

// atClock puts the reading's written time of day on midnight t, or makes
// t a date-only reading.
func atClock(t time.Time, r *reading) crawlkeeper.ParsedDate {
	if !r.hasTime {
		return crawlkeeper.ParsedDate{Time: t, DateOnly: true}
	}
	y, m, d := t.Date()
	return crawlkeeper.ParsedDate{Time: time.Date(y, m, d, r.hh, r.mm, r.ss, 0, t.Location())}
}

// monthReading reads a whole month as a range of days: its first day
// when the options ask for the start of ranges (event starts, publication
// dates), else its last (deadlines), like "May 15–17". Year 0 is the year
// of now.
func monthReading(y, m int, op *opts) crawlkeeper.ParsedDate {
	if y == 0 {
		y = op.now.Year()
	}
	d := 1
	if !op.rangeStart {
		d = daysIn(y, m)
	}
	return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, 0, 0, 0, 0, op.loc), DateOnly: true}
}

// nearestWeekday returns midnight of the nearest day with weekday wd,
// today included: the latest such day, or the next one when the options
// ask for upcoming dates. "Friday" on a listing is the Friday it was
// posted; "Friday" as a deadline is the Friday to come.
func nearestWeekday(op *opts, wd time.Weekday) time.Time {
	y, m, d := op.now.Date()
	today := op.now.Weekday()
	delta := -((int(today) - int(wd) + 7) % 7)
	if op.upcoming {
		delta = (int(wd) - int(today) + 7) % 7
	}
	return time.Date(y, m, d+delta, 0, 0, 0, 0, op.loc)
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
