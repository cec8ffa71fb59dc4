package dates

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// parseMachine reads the forms machines write, without allocating: RFC 3339
// and ISO 8601 extended dates and times with or without a zone
// ("2024-05-15", "2024-05-15T10:30:00Z", "2024-05-15 10:30"), the ISO basic
// form ("20240515", "20240515T103000Z"), ISO week dates ("2024-W20-3") and
// Unix epoch seconds (10 digits) and milliseconds (13 digits). Most dates
// crawlers deliver are one of these, so they skip the general parser.
func parseMachine(s string, loc *time.Location) (crawlkeeper.ParsedDate, bool) {
	n := len(s)
	if n < 8 || s[0] < '0' || s[0] > '9' {
		return crawlkeeper.ParsedDate{}, false
	}
	if n >= 10 && s[4] == '-' && (s[5] == 'W' || s[5] == 'w') {
		return weekDate(s, loc)
	}
	if n >= 10 && s[4] == '-' && s[7] == '-' {
		y, ok1 := d4(s, 0)
		m, ok2 := d2(s, 5)
		d, ok3 := d2(s, 8)
		if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) || y < 1 {
			return crawlkeeper.ParsedDate{}, false
		}
		if n == 10 {
			return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc), DateOnly: true}, true
		}
		if c := s[10]; c == '+' || c == '-' || c == 'Z' {
			// A date with a zone and no time, as XML Schema writes it
			// ("2020-07-20+08:00"): midnight there.
			if z, ok := offsetAt(s, 10); ok {
				return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, 0, 0, 0, 0, z), DateOnly: true}, true
			}
			return crawlkeeper.ParsedDate{}, false
		}
		if c := s[10]; c != 'T' && c != 't' && c != ' ' {
			return crawlkeeper.ParsedDate{}, false
		}
		return machineTime(s, 11, true, y, m, d, loc)
	}
	y, ok := d4(s, 0)
	if !ok {
		return crawlkeeper.ParsedDate{}, false
	}
	m, ok1 := d2(s, 4)
	d, ok2 := d2(s, 6)
	allDigits := false
	if n == 10 || n == 13 || n == 14 || n == 16 || n == 19 {
		_, allDigits = digits(s, 0, n)
	}
	if allDigits && n != 14 {
		// Unix time in seconds, milliseconds, microseconds or nanoseconds.
		// Only instants from September 2001 to May 2033 are read: ten
		// digits outside that are phone numbers far more often than dates.
		if v, _ := digits(s, 0, n); s[0] == '1' {
			t := time.Unix(int64(v), 0)
			switch n {
			case 13:
				t = time.UnixMilli(int64(v))
			case 16:
				t = time.UnixMicro(int64(v))
			case 19:
				t = time.Unix(0, int64(v))
			}
			return crawlkeeper.ParsedDate{Time: t.In(loc)}, true
		}
		return crawlkeeper.ParsedDate{}, false
	}
	if allDigits && n == 14 {
		// yyyymmddhhmmss, as logs and file names write it.
		hh, ok3 := d2(s, 8)
		mi, ok4 := d2(s, 10)
		ss, ok5 := d2(s, 12)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) || y < 1 || hh > 23 || mi > 59 || ss > 59 {
			return crawlkeeper.ParsedDate{}, false
		}
		return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, hh, mi, ss, 0, loc)}, true
	}
	if !ok1 || !ok2 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) || y < 1 {
		return crawlkeeper.ParsedDate{}, false
	}
	if n == 8 {
		return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc), DateOnly: true}, true
	}
	if s[8] != 'T' && s[8] != 't' {
		return crawlkeeper.ParsedDate{}, false
	}
	return machineTime(s, 9, false, y, m, d, loc)
}

// offsetAt reads a zone at s[i:] to the end: "Z", "+hh", "+hhmm" or
// "+hh:mm".
func offsetAt(s string, i int) (*time.Location, bool) {
	n := len(s)
	if s[i] == 'Z' {
		return time.UTC, i+1 == n
	}
	oh, ok := d2(s, i+1)
	if !ok {
		return nil, false
	}
	om := 0
	switch {
	case i+3 == n:
	case i+6 == n && s[i+3] == ':':
		om, ok = d2(s, i+4)
	case i+5 == n:
		om, ok = d2(s, i+3)
	default:
		return nil, false
	}
	if !ok || oh > 14 || om > 59 {
		return nil, false
	}
	off := (oh*60 + om) * 60
	if s[i] == '-' {
		off = -off
	}
	return fixedZone(off), true
}

// weekDate reads an ISO 8601 week date, "2024-W20-3", optionally with a
// time ("2024-W20-3T10:30:00Z").
func weekDate(s string, loc *time.Location) (crawlkeeper.ParsedDate, bool) {
	fail := crawlkeeper.ParsedDate{}
	y, ok1 := d4(s, 0)
	w, ok2 := d2(s, 6)
	if !ok1 || !ok2 || s[8] != '-' || s[9] < '1' || s[9] > '7' || w < 1 || w > 53 || y < 1 {
		return fail, false
	}
	// Week 1 is the week with the year's first Thursday, so it holds 4 January.
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)
	monday := 4 - (int(jan4.Weekday())+6)%7
	t := time.Date(y, 1, monday+(w-1)*7+int(s[9]-'1'), 0, 0, 0, 0, time.UTC)
	if iy, iw := t.ISOWeek(); iy != y || iw != w {
		return fail, false // week 53 of a year that has 52
	}
	yy, m, d := t.Date()
	if len(s) == 10 {
		return crawlkeeper.ParsedDate{Time: time.Date(yy, m, d, 0, 0, 0, 0, loc), DateOnly: true}, true
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return fail, false
	}
	return machineTime(s, 11, true, yy, int(m), d, loc)
}

// machineTime reads the time of day from s[i:], in the extended form
// ("10:30:00.5+09:00") or the basic one ("103000+0900").
func machineTime(s string, i int, extended bool, y, m, d int, loc *time.Location) (crawlkeeper.ParsedDate, bool) {
	n := len(s)
	fail := crawlkeeper.ParsedDate{}
	hh, ok := d2(s, i)
	if !ok {
		return fail, false
	}
	i += 2
	if extended {
		if i >= n || s[i] != ':' {
			return fail, false
		}
		i++
	}
	mm, ok := d2(s, i)
	if !ok {
		return fail, false
	}
	i += 2
	ss, ns := 0, 0
	if extended && i < n && s[i] == ':' || !extended && i+1 < n && s[i] >= '0' && s[i] <= '9' {
		if extended {
			i++
		}
		if ss, ok = d2(s, i); !ok {
			return fail, false
		}
		i += 2
		if i < n && (s[i] == '.' || s[i] == ',') {
			i++
			start := i
			scale := 100000000
			for i < n && s[i] >= '0' && s[i] <= '9' {
				ns += int(s[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == start {
				return fail, false
			}
		}
	}
	if hh > 23 || mm > 59 || ss > 59 {
		return fail, false
	}
	switch {
	case i == n:
	case (s[i] == 'Z' || s[i] == 'z') && i+1 == n:
		loc = time.UTC
	case s[i] == '+' || s[i] == '-':
		oh, ok := d2(s, i+1)
		if !ok {
			return fail, false
		}
		om := 0
		switch {
		case i+3 == n:
		case s[i+3] == ':' && i+6 == n:
			if om, ok = d2(s, i+4); !ok {
				return fail, false
			}
		case i+5 == n:
			if om, ok = d2(s, i+3); !ok {
				return fail, false
			}
		default:
			return fail, false
		}
		if oh > 14 || om > 59 {
			return fail, false
		}
		off := (oh*60 + om) * 60
		if s[i] == '-' {
			off = -off
		}
		loc = fixedZone(off)
	default:
		return fail, false
	}
	return crawlkeeper.ParsedDate{Time: time.Date(y, time.Month(m), d, hh, mm, ss, ns, loc)}, true
}

// d2 reads two decimal digits at s[i:]. It is the hot path of RFC 3339
// reading, so it avoids the loop of digits.
func d2(s string, i int) (int, bool) {
	if i+2 > len(s) {
		return 0, false
	}
	a, b := s[i]-'0', s[i+1]-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

// d4 reads four decimal digits at s[i:].
func d4(s string, i int) (int, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	a, b, c, d := s[i]-'0', s[i+1]-'0', s[i+2]-'0', s[i+3]-'0'
	return int(a)*1000 + int(b)*100 + int(c)*10 + int(d), a <= 9 && b <= 9 && c <= 9 && d <= 9
}

// digits reads n decimal digits at s[i:].
func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}
