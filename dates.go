package crawlkeeper

import (
	"strconv"
	"strings"
	"time"
)

// DateOptions tell a DateParser how to read one string.
type DateOptions struct {
	// Location is the zone of dates that carry none. Nil means UTC.
	Location *time.Location
	// Order is "DMY", "MDY" or "YMD" for ambiguous numeric dates; empty
	// means by Locale: MDY for en-US, DMY otherwise.
	Order string
	// Locale, such as "en-US", hints language and order.
	Locale string
	// Languages are language hints ("de", "ja"), most likely first.
	Languages []string
	// Now resolves relative dates ("3 days ago").
	Now time.Time
	// RangeStart picks the start of a range ("May 15–17") instead of its end.
	// A month alone ("March 2025") is a range of days.
	RangeStart bool
	// Upcoming reads text that names a day only loosely as the next such
	// day rather than the last: a weekday alone ("Friday") and a duration
	// without a direction ("3 days"). Deadlines and event dates are
	// upcoming, publication dates are not. Defaults to false.
	Upcoming bool
}

// ParsedDate is a date read from text.
type ParsedDate struct {
	// Time is the instant read, in the options' Location when the text had
	// no zone. For a date without a time of day it is midnight.
	Time time.Time
	// DateOnly is set when the text named a day but no time of day.
	DateOnly bool
}

// DateParser reads the dates sites publish. Implementations must be safe
// for concurrent use and must return an error, never a guess, for text that
// is not a date.
type DateParser interface {
	ParseDate(s string, o DateOptions) (ParsedDate, error)
}

// MachineDates is a DateParser for machine formats only: RFC 3339 with or
// without a zone, a plain YYYY-MM-DD date and Unix epoch seconds or
// milliseconds. It is what the domain uses when no richer parser is wired.
type MachineDates struct{}

var machineLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
}

// ParseDate implements DateParser.
func (MachineDates) ParseDate(s string, o DateOptions) (ParsedDate, error) {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ParsedDate{Time: EpochTime(n)}, nil
	}
	if len(s) == 10 {
		if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
			return ParsedDate{Time: t, DateOnly: true}, nil
		}
	}
	for _, layout := range machineLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return ParsedDate{Time: t}, nil
		}
	}
	return ParsedDate{}, Errorf(EINVALID, "cannot read %q as a date", s)
}

// EpochTime reads a Unix timestamp in seconds or, when it is too large to
// be seconds of a plausible date (after the year 5138), milliseconds.
func EpochTime(n int64) time.Time {
	if n > 1e11 || n < -1e11 {
		return time.UnixMilli(n).UTC()
	}
	return time.Unix(n, 0).UTC()
}

// EndOfDay returns the first instant of the day after t's day in loc: the
// moment a date-only deadline on that day has passed.
func EndOfDay(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}
