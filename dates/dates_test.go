package dates

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// testNow is a Wednesday afternoon in UTC; in Tokyo it is already
// Thursday, in New York still Wednesday morning.
const testNow = "2024-05-22T15:04:05Z"

// dateCase is one input with its options and the expected reading.
type dateCase struct {
	in     string
	want   string // RFC 3339 with the expected offset; empty for an error
	only   bool   // expected DateOnly
	loc    string // IANA zone of the options; empty for UTC
	order  string
	locale string
	langs  []string
	start  bool
	up     bool   // DateOptions.Upcoming
	now    string // overrides testNow
}

type mod func(*dateCase)

func inZone(z string) mod    { return func(c *dateCase) { c.loc = z } }
func order(o string) mod     { return func(c *dateCase) { c.order = o } }
func locale(l string) mod    { return func(c *dateCase) { c.locale = l } }
func langs(l ...string) mod  { return func(c *dateCase) { c.langs = l } }
func nowAt(n string) mod     { return func(c *dateCase) { c.now = n } }
func rangeStart(c *dateCase) { c.start = true }
func upcoming(c *dateCase)   { c.up = true }
func apply(c dateCase, ms []mod) dateCase {
	for _, m := range ms {
		m(&c)
	}
	return c
}

// day expects a date-only reading at midnight UTC of ymd.
func day(in, ymd string, ms ...mod) dateCase {
	return apply(dateCase{in: in, want: ymd + "T00:00:00Z", only: true}, ms)
}

// dayAt expects a date-only reading at the given midnight, with its offset.
func dayAt(in, want string, ms ...mod) dateCase {
	return apply(dateCase{in: in, want: want, only: true}, ms)
}

// at expects an instant with a time of day.
func at(in, want string, ms ...mod) dateCase { return apply(dateCase{in: in, want: want}, ms) }

// bad expects an error.
func bad(in string, ms ...mod) dateCase { return apply(dateCase{in: in}, ms) }

var machineCases = []dateCase{
	at("2024-05-15T10:30:00Z", "2024-05-15T10:30:00Z"),
	at("2024-05-15T10:30:00+09:00", "2024-05-15T10:30:00+09:00"),
	at("2024-05-15T10:30:00-05:00", "2024-05-15T10:30:00-05:00"),
	at("2024-05-15T10:30:00+05:30", "2024-05-15T10:30:00+05:30"),
	at("2024-05-15T10:30:00+0530", "2024-05-15T10:30:00+05:30"),
	at("2024-05-15T10:30:00+09", "2024-05-15T10:30:00+09:00"),
	at("2024-05-15T10:30:00.123456789Z", "2024-05-15T10:30:00.123456789Z"),
	at("2024-05-15T10:30:00.5Z", "2024-05-15T10:30:00.5Z"),
	at("2024-05-15T10:30:00,25Z", "2024-05-15T10:30:00.25Z"),
	at("2024-05-15T10:30:00", "2024-05-15T10:30:00Z"),
	at("2024-05-15T10:30:00", "2024-05-15T10:30:00+09:00", inZone("Asia/Tokyo")),
	at("2024-05-15T10:30:00", "2024-05-15T10:30:00-04:00", inZone("America/New_York")),
	at("2024-01-15T10:30:00", "2024-01-15T10:30:00-05:00", inZone("America/New_York")),
	at("2024-05-15T10:30:00Z", "2024-05-15T10:30:00Z", inZone("Asia/Tokyo")),
	at("2024-05-15 10:30", "2024-05-15T10:30:00Z"),
	at("2024-05-15 10:30:45", "2024-05-15T10:30:45Z"),
	at("2024-05-15T10:30Z", "2024-05-15T10:30:00Z"),
	at("2024-05-15t10:30:00z", "2024-05-15T10:30:00Z"),
	at("  2024-05-15T10:30:00Z \n", "2024-05-15T10:30:00Z"),
	at("2024-05-15T10:30:00 +09:00", "2024-05-15T10:30:00+09:00"),
	at("2024-05-15 10:30:00 UTC", "2024-05-15T10:30:00Z"),
	at("2024-05-15 10:30:00 -0700", "2024-05-15T10:30:00-07:00"),
	day("2024-05-15", "2024-05-15"),
	day("2024-02-29", "2024-02-29"),
	dayAt("2024-05-15", "2024-05-15T00:00:00-04:00", inZone("America/New_York")),
	dayAt("2024-05-15", "2024-05-15T00:00:00+09:00", inZone("Asia/Tokyo")),
	day("2024-5-6", "2024-05-06"),
	at("20240515T103000Z", "2024-05-15T10:30:00Z"),
	at("20240515T1030Z", "2024-05-15T10:30:00Z"),
	at("20240515T103000+0900", "2024-05-15T10:30:00+09:00"),
	at("20240515T103000", "2024-05-15T10:30:00Z"),
	day("20240515", "2024-05-15"),
	at("1715769000", "2024-05-15T10:30:00Z"),
	at("1715769000123", "2024-05-15T10:30:00.123Z"),
	at("1715769000", "2024-05-15T19:30:00+09:00", inZone("Asia/Tokyo")),
	day("2024-W20-3", "2024-05-15"),
	day("2024-W01-1", "2024-01-01"),
	day("2021-W01-1", "2021-01-04"),
	day("2020-W53-5", "2021-01-01"),
	at("2024-W20-3T10:30:00Z", "2024-05-15T10:30:00Z"),
	bad("2021-W53-1"),
	bad("2024-W20-8"),
	bad("2023-02-29"),
	bad("2024-13-01"),
	bad("2024-05-32"),
	bad("2024-05-15T25:00:00Z"),
	bad("2024-05-15T10:61:00Z"),
	bad("2024-05-15T10:30:00+15:00"),
	bad("20241315"),
	bad("12345"),
	bad("123456789"),
	bad("12345678901"),
	bad("2024"),
	// A month alone is a range of days: its last day, or its first for
	// the start of ranges.
	day("2024-05", "2024-05-31"),
	day("2024-05", "2024-05-01", rangeStart),
	day("05/2024", "2024-05-31"),
	day("05.2024", "2024-05-31"),
	day("2/2024", "2024-02-29"),
	bad("2024-13"),
	bad("2024.05"),
	dayAt("2020-07-20+0800", "2020-07-20T00:00:00+08:00"),
	dayAt("2020-07-20+08:00", "2020-07-20T00:00:00+08:00"),
	dayAt("2020-07-20Z", "2020-07-20T00:00:00Z", inZone("Asia/Tokyo")),
	at("20140722105203", "2014-07-22T10:52:03Z"),
	at("1384216367111222", "2013-11-12T00:32:47.111222Z"),
	at("1384216367111222333", "2013-11-12T00:32:47.111222333Z"),
	// Ten digits that are no plausible epoch second are a phone number.
	bad("5551234567"),
	bad("0171234567"),
}

var rfcCases = []dateCase{
	at("Wed, 15 May 2024 10:30:00 GMT", "2024-05-15T10:30:00Z"),
	at("Wed, 15 May 2024 10:30:00 +0000", "2024-05-15T10:30:00Z"),
	at("Wed, 15 May 2024 10:30:00 -0700", "2024-05-15T10:30:00-07:00"),
	at("Wed, 15 May 2024 10:30:00 +0000 (UTC)", "2024-05-15T10:30:00Z"),
	at("Wed, 15 May 2024 10:30:00 EST", "2024-05-15T10:30:00-05:00"),
	at("Wed, 15 May 2024 10:30:00 PDT", "2024-05-15T10:30:00-07:00"),
	at("Wed, 15 May 2024 10:30:00 CEST", "2024-05-15T10:30:00+02:00"),
	at("Wed, 15 May 2024 10:30:00 CET", "2024-05-15T10:30:00+01:00"),
	at("Wed, 15 May 2024 10:30:00", "2024-05-15T10:30:00+09:00", inZone("Asia/Tokyo")),
	at("Wednesday, 15-May-24 10:30:00 GMT", "2024-05-15T10:30:00Z"),
	at("Wednesday, 15-May-24 10:30:00 EDT", "2024-05-15T10:30:00-04:00"),
	at("Wed May 15 10:30:00 2024", "2024-05-15T10:30:00Z"),
	at("Sun May  5 10:30:00 2024", "2024-05-05T10:30:00Z"),
	at("Wed May 15 10:30:00 UTC 2024", "2024-05-15T10:30:00Z"),
	at("Wed May 15 10:30:00 JST 2024", "2024-05-15T10:30:00+09:00"),
	at("Wed May 15 10:30:00 +0900 2024", "2024-05-15T10:30:00+09:00"),
	at("Wed May 15 10:30:00 -0700 2024", "2024-05-15T10:30:00-07:00"),
}

var englishCases = []dateCase{
	day("May 15, 2024", "2024-05-15"),
	day("15 May 2024", "2024-05-15"),
	day("15 may 2024", "2024-05-15"),
	day("MAY 15, 2024", "2024-05-15"),
	day("May 15th, 2024", "2024-05-15"),
	day("15th May 2024", "2024-05-15"),
	day("the 15th of May, 2024", "2024-05-15"),
	day("1st May 2024", "2024-05-01"),
	day("2nd May 2024", "2024-05-02"),
	day("3rd May 2024", "2024-05-03"),
	day("May 1st 2024", "2024-05-01"),
	day("Sept. 5, 2024", "2024-09-05"),
	day("Sep 5 2024", "2024-09-05"),
	day("Dec. 25, 2023", "2023-12-25"),
	day("January 1, 2025", "2025-01-01"),
	day("February 29, 2024", "2024-02-29"),
	day("15-May-2024", "2024-05-15"),
	day("15-May-24", "2024-05-15"),
	day("15 May 24", "2024-05-15"),
	day("May-15-2024", "2024-05-15"),
	day("15 May 1999", "1999-05-15"),
	day("15 May 99", "1999-05-15"),
	day("Wednesday, May 15, 2024", "2024-05-15"),
	day("Wed, May 15, 2024", "2024-05-15"),
	day("Posted on May 15, 2024", "2024-05-15"),
	day("Published: 15 May 2024", "2024-05-15"),
	at("Wednesday, May 15, 2024 10:30 AM", "2024-05-15T10:30:00Z"),
	at("Wednesday, May 15, 2024 10:30 PM", "2024-05-15T22:30:00Z"),
	at("May 15, 2024 12:00 AM", "2024-05-15T00:00:00Z"),
	at("May 15, 2024 12:30 PM", "2024-05-15T12:30:00Z"),
	at("May 15, 2024 at 3pm", "2024-05-15T15:00:00Z"),
	at("May 15, 2024 3 p.m.", "2024-05-15T15:00:00Z"),
	at("May 15, 2024, 10:30 a.m.", "2024-05-15T10:30:00Z"),
	at("15 May 2024 14:45:30", "2024-05-15T14:45:30Z"),
	at("15 May 2024 14:45", "2024-05-15T14:45:00+09:00", inZone("Asia/Tokyo")),
	at("10:30 PM EST May 15 2024", "2024-05-15T22:30:00-05:00"),
	at("May 15, 2024 10:30 PM EST", "2024-05-15T22:30:00-05:00"),
	at("May 15, 2024 10:30 PM EDT", "2024-05-15T22:30:00-04:00"),
	at("May 15, 2024 10:30 CST", "2024-05-15T10:30:00-06:00"),
	at("May 15, 2024 10:30 CDT", "2024-05-15T10:30:00-05:00"),
	at("May 15, 2024 10:30 MST", "2024-05-15T10:30:00-07:00"),
	at("May 15, 2024 10:30 MDT", "2024-05-15T10:30:00-06:00"),
	at("May 15, 2024 10:30 PST", "2024-05-15T10:30:00-08:00"),
	at("May 15, 2024 10:30 PDT", "2024-05-15T10:30:00-07:00"),
	at("May 15, 2024 10:30 BST", "2024-05-15T10:30:00+01:00"),
	at("May 15, 2024 10:30 IST", "2024-05-15T10:30:00+05:30"),
	at("May 15, 2024 10:30 JST", "2024-05-15T10:30:00+09:00"),
	at("May 15, 2024 10:30 KST", "2024-05-15T10:30:00+09:00"),
	at("May 15, 2024 10:30 AEST", "2024-05-15T10:30:00+10:00"),
	at("May 15, 2024 10:30 CEST", "2024-05-15T10:30:00+02:00"),
	at("May 15, 2024 10:30 UTC", "2024-05-15T10:30:00Z"),
	at("May 15, 2024 10:30 UTC", "2024-05-15T10:30:00Z", inZone("America/New_York")),
	at("May 15, 2024 10:30 GMT+2", "2024-05-15T10:30:00+02:00"),
	at("May 15, 2024 10:30 UTC+05:30", "2024-05-15T10:30:00+05:30"),
	at("May 15, 2024 10:30 +09:00", "2024-05-15T10:30:00+09:00"),
	at("May 15, 2024 10:30 -0500", "2024-05-15T10:30:00-05:00"),
	at("May 15, 2024 10:30:15.250", "2024-05-15T10:30:15.25Z"),
	bad("February 29, 2023"),
	bad("April 31, 2024"),
	bad("May 32, 2024"),
	day("May 2024", "2024-05-31"),
	day("May 2024", "2024-05-01", rangeStart),
	day("February 2015", "2015-02-28"),
	day("Feb. 2016", "2016-02-29"),
	// A month name alone is read only in a language the source names:
	// alone, such a word is more often a name or another language's word.
	day("March", "2024-03-31", langs("en")),
	day("March", "2024-03-01", rangeStart, langs("en")),
	day("Février", "2024-02-29", langs("fr")),
	bad("March"),
	bad("Augusta"),
	bad("Marc"),
	bad("Mars"),
	// A colon before a one-digit number is a score, not a time.
	bad("2:1 win"),
	bad("Final 3:0"),
	bad("May"),
	bad("Mar"),
	bad("ago"),
	bad("Sept"),
	// A weekday alone is the nearest such day, today included: the last
	// one, or the next one for upcoming dates (deadlines).
	day("Wednesday", "2024-05-22"),
	day("Wednesday", "2024-05-22", upcoming),
	day("Friday", "2024-05-17"),
	day("Friday", "2024-05-24", upcoming),
	day("Monday", "2024-05-20"),
	at("Mon 19:43", "2024-05-20T19:43:00Z"),
	at("Mon 19:43", "2024-05-27T19:43:00Z", upcoming),
	bad("Mo"),
	bad("Mon-Fri"),
	bad("Monday Friday"),
	// A time alone is today at that time.
	at("10:30", "2024-05-22T10:30:00Z"),
	at("3 pm", "2024-05-22T15:00:00Z"),
	at("10:30 EST", "2024-05-22T10:30:00-05:00"),
	bad("16:9"),
	bad("2:1"),
	bad("May 15, 2024 13:30 PM extra"),
	bad("May 15, 2024 25:30"),
	bad("pm"),
	at("5:7:51 PM", "2024-05-22T17:07:51Z"),
	at("2014/04/02 4:8", "2014-04-02T04:08:00Z"),
	at("May 8, 2009 5:57:51 PM", "2009-05-08T17:57:51Z"),
	at("Tue, 11 Jul 2017 16:28:13 +0200 (CEST)", "2017-07-11T16:28:13+02:00"),
	at("Fri Jul 03 2015 18:04:07 GMT+0100 (GMT Daylight Time)", "2015-07-03T18:04:07+01:00"),
	at("Sun, 3 Jan 2021 00:12:23 +0800 (GMT+08:00)", "2021-01-03T00:12:23+08:00"),
	at("Mon Aug 10 15:44:11 UTC+0100 2015", "2015-08-10T15:44:11+01:00"),
	at("2014-04-26 17:24:37 PST-0700", "2014-04-26T17:24:37-07:00"),
	at("May 15, 2024 at 10:09am PST-08", "2024-05-15T10:09:00-08:00"),
	at("2014-04-26 13:13:43 +0800 +08", "2014-04-26T13:13:43+08:00"),
	at("2015-02-08 03:02:00 +0300 +03 m=+0.000000001", "2015-02-08T03:02:00+03:00"),
	at("06/May/2008:08:11:17 -0700", "2008-05-06T08:11:17-07:00"),
	at("06/May/2008 08:11:17 -0700", "2008-05-06T08:11:17-07:00"),
	at("2017-07-19 03:21:51:897 +0100", "2017-07-19T03:21:51.897+01:00"),
	day("oct 7, '70", "1970-10-07"),
	day("2013-Feb-03", "2013-02-03"),
	bad("May 15, 2024 10:30 PST+0800 +0900"),
}

var numericCases = []dateCase{
	day("15.05.2024", "2024-05-15"),
	day("15/05/2024", "2024-05-15"),
	day("15-05-2024", "2024-05-15"),
	day("15 05 2024", "2024-05-15"),
	day("5.6.2024", "2024-06-05"),
	day("05/15/2024", "2024-05-15"),
	day("05/15/2024", "2024-05-15", order("DMY")),
	day("15/05/2024", "2024-05-15", order("MDY")),
	day("05/06/2024", "2024-06-05"),
	day("05/06/2024", "2024-06-05", order("DMY")),
	day("05/06/2024", "2024-05-06", order("MDY")),
	day("05/06/2024", "2024-05-06", order("mdy")),
	day("05/06/2024", "2024-05-06", locale("en-US")),
	day("05/06/2024", "2024-05-06", locale("en_US")),
	day("05/06/2024", "2024-05-06", locale("en-PH")),
	day("05/06/2024", "2024-06-05", locale("en-GB")),
	day("05/06/2024", "2024-06-05", locale("de-DE")),
	day("05/06/2024", "2024-06-05", locale("fr")),
	day("05/06/2024", "2024-06-05", order("DMY"), locale("en-US")),
	day("2024/05/06", "2024-05-06"),
	day("2024/05/06", "2024-05-06", order("MDY")),
	day("2024/05/06", "2024-05-06", order("DMY")),
	day("2024.05.06", "2024-05-06"),
	day("2024. 5. 6.", "2024-05-06"),
	day("2024 05 06", "2024-05-06"),
	day("13/05/2024", "2024-05-13", order("MDY")),
	day("05/13/2024", "2024-05-13", order("DMY")),
	day("15/05/24", "2024-05-15"),
	day("05/15/24", "2024-05-15", order("MDY")),
	day("05/06/24", "2024-06-05"),
	day("05/06/24", "2024-05-06", order("MDY")),
	day("24/05/06", "2024-05-06", order("YMD")),
	day("24/05/06", "2006-05-24", order("DMY")),
	day("99/12/31", "1999-12-31"),
	day("31/12/99", "1999-12-31"),
	day("01/02/70", "1970-02-01"),
	day("01/02/68", "2068-02-01"),
	at("15.05.2024 10:30", "2024-05-15T10:30:00Z"),
	at("15.05.2024, 10:30 Uhr", "2024-05-15T10:30:00Z"),
	at("15.05.2024 um 10:30 Uhr", "2024-05-15T10:30:00Z"),
	at("05/15/2024 3:45 PM", "2024-05-15T15:45:00Z"),
	at("05/15/2024 3:45 PM", "2024-05-15T15:45:00-04:00", inZone("America/New_York")),
	at("2024/05/15 15:04", "2024-05-15T15:04:00Z"),
	at("15.05.2024 10h30", "2024-05-15T10:30:00Z"),
	bad("13/13/2024"),
	bad("32/01/2024"),
	bad("00/01/2024"),
	bad("1.2.3"),
	bad("1.5"),
	bad("5/15"),
	bad("15.05."),
	bad("12"),
	bad("05/06/2024", order("XYZ")),
}

var languageCases = []dateCase{
	// Words from the CLDR and glibc's locales: format words, genitives,
	// meridiem markers, abbreviations of other scripts.
	day("2024 m. gegužės 15 d.", "2024-05-15"),
	at("2023 m. lapkričio 03 d. 17:45:30", "2023-11-03T17:45:30Z"),
	day("15 մայիսի, 2024 թ.", "2024-05-15"),
	day("3 Նմբ 2023", "2023-11-03"),
	day("15 ta’ Mejju 2024", "2024-05-15"),
	at("શુક્રવાર 03 નવે 2023 05:45:30 સાંજે", "2023-11-03T17:45:30Z"),
	at("Dydd Mercher 15 mis Mai 2024 10:30:00 UTC", "2024-05-15T10:30:00Z"),
	day("སྤྱི་ལོ་2024 ཟླ་༥ ཚེས་15", "2024-05-15"),
	day("སྤྱི་ལོ་2024 ཟླ་བ་ལྔ་པའི་ཚེས་15", "2024-05-15"),
	day("2024 оны 5-р сарын 15", "2024-05-15"),
	day("2024 оны тавдугаар сарын 15", "2024-05-15"),
	at("Mis à jour le 15/05/2024 à 10:32", "2024-05-15T10:32:00Z"),
	at("18 octobre 2012 à 19 h 21 min", "2012-10-18T19:21:00Z"),
	at("15. Mai 2024 um 10 Uhr 30", "2024-05-15T10:30:00Z"),
	// Short abbreviations only in a complete date with its year.
	day("l-Erbgħa, 15 ta Mej, 2024", "2024-05-15"),
	day("dam 15 lia, 2024", "2024-05-15"),
	at("Sr 15 Mej 2024 10:30:00", "2024-05-15T10:30:00Z"),
	// Dotted meridiem initials.
	at("3 nën 2023, 5:45:30 m.d.", "2023-11-03T17:45:30Z"),
	day("3mh dhen t-Samhain 2023", "2023-11-03"),
	// A month as a prefix and its number.
	day("15 ŋ5 2024", "2024-05-15"),
	at("24.03.2019. u 22:22", "2019-03-24T22:22:00Z"),
	// Full formats with the name of Coordinated Universal Time.
	at("Mittwoch, 7. September 2022 um 14:25:00 Koordinierte Weltzeit", "2022-09-07T14:25:00Z"),
	at("Wednesday, September 7, 2022 at 2:25:00 PM Coordinated Universal Time", "2022-09-07T14:25:00Z"),
	// Case endings glued to the month in the formats (Basque "-ren").
	day("2024ko maiatzaren 15a", "2024-05-15"),
	day("15ی ئایاری 2024", "2024-05-15"),
	at("3 o.11 2023 17:45:30", "2023-11-03T17:45:30Z"),
	day("15. Mai 2024", "2024-05-15"),
	day("15. März 2024", "2024-03-15"),
	day("15. Maerz 2024", "2024-03-15"),
	day("15. MÄRZ 2024", "2024-03-15"),
	day("1. Januar 2025", "2025-01-01"),
	day("3. Jänner 2025", "2025-01-03"),
	day("Mittwoch, 15. Mai 2024", "2024-05-15"),
	day("am 15. Mai 2024", "2024-05-15"),
	at("15. Mai 2024 um 10:30 Uhr", "2024-05-15T10:30:00Z"),
	day("le 15 mai 2024", "2024-05-15"),
	day("15 février 2024", "2024-02-15"),
	day("15 fevrier 2024", "2024-02-15"),
	day("1er mai 2024", "2024-05-01"),
	day("15 décembre 2023", "2023-12-15"),
	day("15 août 2024", "2024-08-15"),
	at("mercredi 15 mai 2024 à 10h30", "2024-05-15T10:30:00Z"),
	day("15 de mayo de 2024", "2024-05-15"),
	day("miércoles, 15 de mayo de 2024", "2024-05-15"),
	day("15 de septiembre de 2024", "2024-09-15"),
	day("1 de enero de 2025", "2025-01-01"),
	day("15 ago 2024", "2024-08-15"),
	day("15 maggio 2024", "2024-05-15"),
	day("mercoledì 15 maggio 2024", "2024-05-15"),
	day("15 dicembre 2023", "2023-12-15"),
	day("15 de maio de 2024", "2024-05-15"),
	day("15 de março de 2024", "2024-03-15"),
	day("quarta-feira, 15 de maio de 2024", "2024-05-15"),
	day("15 mei 2024", "2024-05-15"),
	day("woensdag 15 mei 2024", "2024-05-15"),
	day("15 maart 2024", "2024-03-15"),
	day("15 мая 2024", "2024-05-15"),
	day("15 мая 2024 г.", "2024-05-15"),
	day("15 мая 2024 года", "2024-05-15"),
	at("15 мая 2024 г. в 10:30", "2024-05-15T10:30:00Z"),
	day("1 января 2025", "2025-01-01"),
	day("15 Май 2024", "2024-05-15"),
	day("среда, 15 мая 2024", "2024-05-15"),
	day("15 maja 2024", "2024-05-15"),
	day("15 maja 2024 r.", "2024-05-15"),
	day("15 października 2024", "2024-10-15"),
	day("1 stycznia 2025", "2025-01-01"),
	day("15 Mayıs 2024", "2024-05-15"),
	day("15 Ağustos 2024", "2024-08-15"),
	day("15 Aralık 2023", "2023-12-15"),
	day("15 مايو 2024", "2024-05-15"),
	day("١٥ مايو ٢٠٢٤", "2024-05-15"),
	day("15 أيار 2024", "2024-05-15"),
	day("15 كانون الثاني 2024", "2024-01-15"),
	day("15 تشرين الأول 2024", "2024-10-15"),
	day("الأربعاء ١٥ مايو ٢٠٢٤", "2024-05-15"),
	day("۱۵ مه ۲۰۲۴", "2024-05-15"),
	day("۲۶ اردیبهشت ۱۴۰۳", "2024-05-15"),
	day("۱ فروردین ۱۴۰۳", "2024-03-20"),
	day("۳۰ اسفند ۱۴۰۳", "2025-03-20"),
	bad("۳۰ اسفند ۱۴۰۲"),
	day("15 मई 2024", "2024-05-15"),
	day("१५ मई २०२४", "2024-05-15"),
	day("15 फ़रवरी 2024", "2024-02-15"),
	day("15 फरवरी 2024", "2024-02-15"),
	day("१ जनवरी २०२५", "2025-01-01"),
}

var cjkCases = []dateCase{
	day("2024年5月15日", "2024-05-15"),
	day("2024年05月15日", "2024-05-15"),
	at("2024年5月15日 10時30分", "2024-05-15T10:30:00Z"),
	at("2024年05月15日 10時30分15秒", "2024-05-15T10:30:15Z"),
	at("2024年5月15日 10:30", "2024-05-15T10:30:00Z"),
	day("2024年5月15日(水)", "2024-05-15"),
	day("2024年5月15日（水）", "2024-05-15"),
	day("2024年5月19日(日)", "2024-05-19"),
	day("2024年5月20日(月)", "2024-05-20"),
	day("2024年5月15日 星期三", "2024-05-15"),
	day("2024年5月15日星期三", "2024-05-15"),
	day("2024年5月15日 周三", "2024-05-15"),
	at("2024年5月15日 下午3点", "2024-05-15T15:00:00Z"),
	at("2024年5月15日 下午3点30分", "2024-05-15T15:30:00Z"),
	at("2024年5月15日 上午9点", "2024-05-15T09:00:00Z"),
	at("2024年5月15日 3点半", "2024-05-15T03:30:00Z"),
	at("2024年5月15日 午後3時", "2024-05-15T15:00:00Z"),
	at("2024年5月15日 午前0時", "2024-05-15T00:00:00Z"),
	day("２０２４年５月１５日", "2024-05-15"),
	day("２０２４／０５／１５", "2024-05-15"),
	day("2024.5.15", "2024-05-15"),
	day("2024/5/15", "2024-05-15"),
	day("2024年5月15号", "2024-05-15"),
	day("令和6年5月15日", "2024-05-15"),
	day("令和元年5月1日", "2019-05-01"),
	day("令和2年1月1日", "2020-01-01"),
	day("平成31年4月30日", "2019-04-30"),
	day("平成元年1月8日", "1989-01-08"),
	day("昭和64年1月7日", "1989-01-07"),
	day("大正15年12月25日", "1926-12-25"),
	day("明治45年7月30日", "1912-07-30"),
	at("令和6年5月15日 10時30分", "2024-05-15T10:30:00+09:00", inZone("Asia/Tokyo")),
	day("R6.5.15", "2024-05-15"),
	day("H31.4.30", "2019-04-30"),
	day("S64.1.7", "1989-01-07"),
	day("2024년 5월 15일", "2024-05-15"),
	at("2024년 5월 15일 오후 3시 30분", "2024-05-15T15:30:00Z"),
	at("2024년 5월 15일 오전 9시", "2024-05-15T09:00:00Z"),
	at("2024년 5월 15일 오후 12시", "2024-05-15T12:00:00Z"),
	day("2024년 5월 15일 (수)", "2024-05-15"),
	day("2024년 5월 15일 수요일", "2024-05-15"),
	day("2024. 5. 15.", "2024-05-15"),
	day("5月15日", "2024-05-15"),
	at("5月15日 10:30", "2024-05-15T10:30:00Z"),
	day("5월 15일", "2024-05-15"),
	bad("2024年5月"),
	bad("15日"),
	bad("2024年13月1日"),
	bad("令和"),
}

var missingYearCases = []dateCase{
	day("May 15", "2024-05-15"),
	day("15 May", "2024-05-15"),
	day("15. Mai", "2024-05-15"),
	day("15 мая", "2024-05-15"),
	day("Dec 31", "2024-12-31"),
	at("May 15 10:30", "2024-05-15T10:30:00Z"),
	day("May 15", "2025-05-15", nowAt("2025-01-02T00:00:00Z")),
	// The year is the year of now where the date is read: New Year has
	// come in Tokyo but not in New York.
	dayAt("5月15日", "2025-05-15T00:00:00+09:00", inZone("Asia/Tokyo"), nowAt("2024-12-31T20:00:00Z")),
	dayAt("5月15日", "2024-05-15T00:00:00-04:00", inZone("America/New_York"), nowAt("2024-12-31T20:00:00Z")),
	bad("Feb 29", nowAt("2023-06-01T00:00:00Z")),
	day("Feb 29", "2024-02-29"),
}

var relativeCases = []dateCase{
	// Direction and unit words from the CLDR's relative patterns.
	day("antaŭ 3 tagoj", "2024-05-19"),
	at("post 5 horoj", "2024-05-22T20:04:05Z"),
	day("prieš 2 savaites", "2024-05-08"),
	day("قبل يومين", "2024-05-20"),
	day("לפני שבועיים", "2024-05-08"),
	day("منذ يومين", "2024-05-20"),
	day("3 làithean air ais", "2024-05-19"),
	day("today", "2024-05-22"),
	day("Today", "2024-05-22"),
	day("yesterday", "2024-05-21"),
	day("tomorrow", "2024-05-23"),
	day("day before yesterday", "2024-05-20"),
	at("now", "2024-05-22T15:04:05Z"),
	at("just now", "2024-05-22T15:04:05Z"),
	day("3 days ago", "2024-05-19"),
	day("1 day ago", "2024-05-21"),
	day("a day ago", "2024-05-21"),
	day("two days ago", "2024-05-20"),
	day("in 2 weeks", "2024-06-05"),
	day("2 weeks ago", "2024-05-08"),
	day("a week ago", "2024-05-15"),
	at("2 hours ago", "2024-05-22T13:04:05Z"),
	at("an hour ago", "2024-05-22T14:04:05Z"),
	at("30 minutes ago", "2024-05-22T14:34:05Z"),
	at("45 seconds ago", "2024-05-22T15:03:20Z"),
	at("5 mins ago", "2024-05-22T14:59:05Z"),
	at("2h ago", "2024-05-22T13:04:05Z"),
	day("3d ago", "2024-05-19"),
	day("1 month ago", "2024-04-22"),
	day("3 months ago", "2024-02-22"),
	day("1 month ago", "2024-04-30", nowAt("2024-05-31T12:00:00Z")),
	day("1 year ago", "2023-05-22"),
	day("1 year ago", "2023-02-28", nowAt("2024-02-29T12:00:00Z")),
	day("in 3 days", "2024-05-25"),
	day("2 days from now", "2024-05-24"),
	day("3 days later", "2024-05-25"),
	day("last Monday", "2024-05-20"),
	day("last Wednesday", "2024-05-15"),
	day("next Friday", "2024-05-24"),
	day("next Wednesday", "2024-05-29"),
	day("last week", "2024-05-15"),
	day("next month", "2024-06-22"),
	at("yesterday 10:30", "2024-05-21T10:30:00Z"),
	at("yesterday at 10:30 PM", "2024-05-21T22:30:00Z"),
	at("today 3pm", "2024-05-22T15:00:00Z"),
	at("Today, 09:15 UTC", "2024-05-22T09:15:00Z"),
	day("3日前", "2024-05-19"),
	day("2週間前", "2024-05-08"),
	day("3か月前", "2024-02-22"),
	day("3ヶ月前", "2024-02-22"),
	day("3日後", "2024-05-25"),
	at("2時間前", "2024-05-22T13:04:05Z"),
	at("5分前", "2024-05-22T14:59:05Z"),
	day("昨日", "2024-05-21"),
	day("明日", "2024-05-23"),
	day("今日", "2024-05-22"),
	day("一昨日", "2024-05-20"),
	at("昨日 10:30", "2024-05-21T10:30:00Z"),
	day("3天前", "2024-05-19"),
	at("2小时前", "2024-05-22T13:04:05Z"),
	day("1周前", "2024-05-15"),
	day("2个月前", "2024-03-22"),
	day("昨天", "2024-05-21"),
	day("前天", "2024-05-20"),
	day("今天", "2024-05-22"),
	day("明天", "2024-05-23"),
	day("后天", "2024-05-24"),
	at("昨天 下午3点", "2024-05-21T15:00:00Z"),
	day("3일 전", "2024-05-19"),
	day("2주 전", "2024-05-08"),
	at("2시간 전", "2024-05-22T13:04:05Z"),
	day("어제", "2024-05-21"),
	day("오늘", "2024-05-22"),
	day("내일", "2024-05-23"),
	at("어제 오후 3시", "2024-05-21T15:00:00Z"),
	day("heute", "2024-05-22"),
	day("gestern", "2024-05-21"),
	day("morgen", "2024-05-23"),
	day("vorgestern", "2024-05-20"),
	day("vor 3 Tagen", "2024-05-19"),
	day("vor 2 Wochen", "2024-05-08"),
	day("vor 2 Monaten", "2024-03-22"),
	at("vor 2 Stunden", "2024-05-22T13:04:05Z"),
	day("vor einer Woche", "2024-05-15"),
	day("in 3 Tagen", "2024-05-25"),
	at("gestern um 10:30 Uhr", "2024-05-21T10:30:00Z"),
	day("letzten Montag", "2024-05-20"),
	day("aujourd'hui", "2024-05-22"),
	day("aujourd’hui", "2024-05-22"),
	day("hier", "2024-05-21"),
	day("demain", "2024-05-23"),
	day("avant-hier", "2024-05-20"),
	day("il y a 3 jours", "2024-05-19"),
	day("il y a 2 semaines", "2024-05-08"),
	day("il y a 2 mois", "2024-03-22"),
	at("il y a 2 heures", "2024-05-22T13:04:05Z"),
	day("il y a une semaine", "2024-05-15"),
	day("dans 3 jours", "2024-05-25"),
	at("hier à 10h30", "2024-05-21T10:30:00Z"),
	day("lundi dernier", "2024-05-20"),
	day("vendredi prochain", "2024-05-24"),
	day("hoy", "2024-05-22"),
	day("ayer", "2024-05-21"),
	day("mañana", "2024-05-23"),
	day("anteayer", "2024-05-20"),
	day("hace 3 días", "2024-05-19"),
	day("hace 2 semanas", "2024-05-08"),
	day("hace 2 meses", "2024-03-22"),
	at("hace 2 horas", "2024-05-22T13:04:05Z"),
	day("hace una semana", "2024-05-15"),
	day("dentro de 3 días", "2024-05-25"),
	day("el lunes pasado", "2024-05-20"),
	day("el próximo viernes", "2024-05-24"),
	day("oggi", "2024-05-22"),
	day("ieri", "2024-05-21"),
	day("domani", "2024-05-23"),
	day("3 giorni fa", "2024-05-19"),
	day("2 settimane fa", "2024-05-08"),
	day("2 mesi fa", "2024-03-22"),
	at("2 ore fa", "2024-05-22T13:04:05Z"),
	day("una settimana fa", "2024-05-15"),
	day("tra 3 giorni", "2024-05-25"),
	day("hoje", "2024-05-22"),
	day("ontem", "2024-05-21"),
	day("amanhã", "2024-05-23"),
	day("há 3 dias", "2024-05-19"),
	day("3 dias atrás", "2024-05-19"),
	day("há 2 semanas", "2024-05-08"),
	day("há 2 meses", "2024-03-22"),
	at("há 2 horas", "2024-05-22T13:04:05Z"),
	day("vandaag", "2024-05-22"),
	day("gisteren", "2024-05-21"),
	day("3 dagen geleden", "2024-05-19"),
	day("2 weken geleden", "2024-05-08"),
	day("2 maanden geleden", "2024-03-22"),
	at("2 uur geleden", "2024-05-22T13:04:05Z"),
	day("een week geleden", "2024-05-15"),
	day("over 3 dagen", "2024-05-25"),
	day("сегодня", "2024-05-22"),
	day("вчера", "2024-05-21"),
	day("завтра", "2024-05-23"),
	day("позавчера", "2024-05-20"),
	day("3 дня назад", "2024-05-19"),
	day("5 дней назад", "2024-05-17"),
	day("2 недели назад", "2024-05-08"),
	day("2 месяца назад", "2024-03-22"),
	at("2 часа назад", "2024-05-22T13:04:05Z"),
	day("неделю назад", "2024-05-15"),
	day("через 3 дня", "2024-05-25"),
	at("вчера в 10:30", "2024-05-21T10:30:00Z"),
	day("dzisiaj", "2024-05-22"),
	day("dziś", "2024-05-22"),
	day("wczoraj", "2024-05-21"),
	day("jutro", "2024-05-23"),
	day("3 dni temu", "2024-05-19"),
	day("2 tygodnie temu", "2024-05-08"),
	day("2 miesiące temu", "2024-03-22"),
	at("2 godziny temu", "2024-05-22T13:04:05Z"),
	day("tydzień temu", "2024-05-15"),
	day("bugün", "2024-05-22"),
	day("dün", "2024-05-21"),
	day("yarın", "2024-05-23"),
	day("3 gün önce", "2024-05-19"),
	day("2 hafta önce", "2024-05-08"),
	day("2 ay önce", "2024-03-22"),
	at("2 saat önce", "2024-05-22T13:04:05Z"),
	day("منذ 3 أيام", "2024-05-19"),
	day("أمس", "2024-05-21"),
	day("اليوم", "2024-05-22"),
	day("۳ روز پیش", "2024-05-19"),
	day("دیروز", "2024-05-21"),
	day("3 दिन पहले", "2024-05-19"),
	day("आज", "2024-05-22"),
	bad("last"),
	// Amounts without a direction lie in the past ("15 hrs" on a post), or
	// in the future for upcoming dates (a deadline "3 days" away).
	day("3 days", "2024-05-19"),
	day("3 days", "2024-05-25", upcoming),
	at("15 hrs", "2024-05-22T00:04:05Z"),
	at("2 mins", "2024-05-22T15:02:05Z"),
	at("3 sec", "2024-05-22T15:04:02Z"),
	at("1.5 days", "2024-05-21T03:04:05Z"),
	at("2.5 hours ago", "2024-05-22T12:34:05Z"),
	at("in 0,5 hours", "2024-05-22T15:34:05Z"),
	at("about an hour ago", "2024-05-22T14:04:05Z"),
	at("nine hours ago", "2024-05-22T06:04:05Z"),
	day("in three weeks", "2024-06-12"),
	day("a decade ago", "2014-05-22"),
	day("last decade", "2014-05-22"),
	day("next decade", "2034-05-22"),
	day("1 year, 2 months and 3 days ago", "2023-03-19"),
	day("in 1 year 2 months", "2025-07-22"),
	day("1 Jahr 2 Monate", "2023-03-22"),
	day("vor 1 Jahr und 2 Monaten", "2023-03-22"),
	day("hace 1 año y 2 meses", "2023-03-22"),
	at("2 hours 30 minutes ago", "2024-05-22T12:34:05Z"),
	at("1h30m ago", "2024-05-22T13:34:05Z"),
	at("now - 2 hours", "2024-05-22T13:04:05Z"),
	at("now+1h", "2024-05-22T16:04:05Z"),
	at("yesterday +30m", "2024-05-21T15:34:05Z"),
	day("today + 3 days", "2024-05-25"),
	day("this week", "2024-05-22"),
	day("this Friday", "2024-05-24"),
	at("next Friday at 3pm", "2024-05-24T15:00:00Z"),
	at("last Monday 10:30", "2024-05-20T10:30:00Z"),
	day("il y a un jour", "2024-05-21"),
	day("hace una semana", "2024-05-15"),
	day("dans 2 jours", "2024-05-24"),
	day("5 yıl içinde", "2029-05-22"),
	day("Aujourdʹhui", "2024-05-22"),
	day("včera", "2024-05-21"),
	day("вчора", "2024-05-21"),
	day("hôm qua", "2024-05-21"),
	day("เมื่อวาน", "2024-05-21"),
	day("গতকাল", "2024-05-21"),
	day("אתמול", "2024-05-21"),
	day("Σήμερα", "2024-05-22"),
	day("i går", "2024-05-21"),
	bad("15日"),
	bad("second"),
	bad("yesterday tomorrow"),
	bad("99999999 years ago"),
}

// zoneCases are the deadline edge: the same text in two zones names
// different days or instants.
var zoneCases = []dateCase{
	dayAt("today", "2024-05-23T00:00:00+09:00", inZone("Asia/Tokyo")),
	dayAt("today", "2024-05-22T00:00:00-04:00", inZone("America/New_York")),
	dayAt("yesterday", "2024-05-22T00:00:00+09:00", inZone("Asia/Tokyo")),
	dayAt("yesterday", "2024-05-21T00:00:00-04:00", inZone("America/New_York")),
	dayAt("3日前", "2024-05-20T00:00:00+09:00", inZone("Asia/Tokyo")),
	dayAt("3日前", "2024-05-19T00:00:00-04:00", inZone("America/New_York")),
	dayAt("May 15, 2024", "2024-05-15T00:00:00+09:00", inZone("Asia/Tokyo")),
	dayAt("May 15, 2024", "2024-05-15T00:00:00-04:00", inZone("America/New_York")),
	dayAt("15.01.2024", "2024-01-15T00:00:00-05:00", inZone("America/New_York")),
	at("2024-05-15 23:30", "2024-05-15T23:30:00+09:00", inZone("Asia/Tokyo")),
	at("2024-05-15 23:30", "2024-05-15T23:30:00-04:00", inZone("America/New_York")),
	at("2 hours ago", "2024-05-22T22:04:05+09:00", inZone("Asia/Tokyo")),
	at("2 hours ago", "2024-05-22T09:04:05-04:00", inZone("America/New_York")),
	at("now", "2024-05-23T00:04:05+09:00", inZone("Asia/Tokyo")),
	dayAt("last Wednesday", "2024-05-22T00:00:00+09:00", inZone("Asia/Tokyo")),
	dayAt("last Wednesday", "2024-05-15T00:00:00-04:00", inZone("America/New_York")),
}

var rangeCases = []dateCase{
	day("12.-14. Juni 2021", "2021-06-14"),
	day("12.-14.06.2021", "2021-06-12", rangeStart),
	day("May 15–17, 2024", "2024-05-17"),
	day("May 15–17, 2024", "2024-05-15", rangeStart),
	day("May 15-17, 2024", "2024-05-17"),
	day("May 15-17, 2024", "2024-05-15", rangeStart),
	day("May 15 - June 2, 2024", "2024-06-02"),
	day("May 15 - June 2, 2024", "2024-05-15", rangeStart),
	day("15–17 May 2024", "2024-05-17"),
	day("15–17 May 2024", "2024-05-15", rangeStart),
	day("15-17 May 2024", "2024-05-17"),
	day("15-17 May 2024", "2024-05-15", rangeStart),
	day("2024/5/15～5/17", "2024-05-17"),
	day("2024/5/15～5/17", "2024-05-15", rangeStart),
	day("2024/5/15〜2024/5/17", "2024-05-17"),
	day("2024/5/15〜2024/5/17", "2024-05-15", rangeStart),
	day("2024/5/15～6/2", "2024-06-02", order("DMY")),
	day("2024-05-15 to 2024-05-17", "2024-05-17"),
	day("2024-05-15 to 2024-05-17", "2024-05-15", rangeStart),
	day("from May 15 until May 20, 2024", "2024-05-20"),
	day("from May 15 until May 20, 2024", "2024-05-15", rangeStart),
	day("5月15日～17日", "2024-05-17"),
	day("5月15日～17日", "2024-05-15", rangeStart),
	day("2024年5月15日～17日", "2024-05-17"),
	day("2024年5月15日から17日まで", "2024-05-17"),
	day("2024년 5월 15일 ~ 5월 17일", "2024-05-17"),
	day("Dec 30, 2023 – Jan 2, 2024", "2024-01-02"),
	day("Dec 30, 2023 – Jan 2, 2024", "2023-12-30", rangeStart),
	day("Dec 30 – Jan 2, 2025", "2025-01-02"),
	day("Dec 30 – Jan 2, 2025", "2024-12-30", rangeStart),
	day("15.05.2024 - 17.05.2024", "2024-05-17"),
	day("15.05.2024 - 17.05.2024", "2024-05-15", rangeStart),
	at("May 15, 2024 10:00–12:00", "2024-05-15T12:00:00Z"),
	at("May 15, 2024 10:00–12:00", "2024-05-15T10:00:00Z", rangeStart),
	at("May 15, 2024 10:00-12:00", "2024-05-15T12:00:00Z"),
	day("du 15 au 17 mai 2024", "2024-05-17"),
	day("du 15 au 17 mai 2024", "2024-05-15", rangeStart),
	day("vom 15. bis 17. Mai 2024", "2024-05-17"),
	day("vom 15. bis 17. Mai 2024", "2024-05-15", rangeStart),
	day("del 15 al 17 de mayo de 2024", "2024-05-17"),
	day("15 - 17 мая 2024", "2024-05-17"),
	day("between May 15 and May 17, 2024", "2024-05-15", rangeStart),
	day("5/15 - 5/17/2024", "2024-05-15", order("MDY"), rangeStart),
	bad("May 17–15, 2024"),
	bad("2024-05-15 to"),
	day("2024-05-15 to", "2024-05-15", rangeStart),
	day("until May 15, 2024", "2024-05-15"),
	day("bis 15.05.2024", "2024-05-15"),
	day("hasta el 15 de mayo de 2024", "2024-05-15"),
	bad("May 15 – hello"),
	bad("May 15 ~ May 16 ~ May 17"),
}

var junkCases = []dateCase{
	// A unit word of the CLDR's patterns needs its direction: a number
	// before it alone is a count.
	bad("3 tagoj"),
	bad("15 Mej"),
	bad("M5 2024"),
	bad("No 5 2024"),
	bad("BMW M5 2024"),
	bad("iPhone 15 Pro"),
	bad(""),
	bad("   "),
	bad("hello"),
	bad("N/A"),
	bad("n/a"),
	bad("TBD"),
	bad("12345abc"),
	bad("rolling"),
	bad("ASAP"),
	bad("-"),
	bad("Open until filled"),
	bad("see website"),
	bad("3rd"),
	bad("Q3 2024"),
	bad("Room 12"),
	bad("v1.2.3"),
	bad(strings.Repeat("May 15, 2024 ", 40)),
}

// fallbackCases go through go-dateparser; they are slow, so few.
var fallbackCases = []dateCase{
	day("15 října 2024", "2024-10-15", langs("cs")),
	day("15. května 2024", "2024-05-15", locale("cs-CZ")),
	day("15 Οκτωβρίου 2024", "2024-10-15", langs("el")),
	day("15 ตุลาคม 2567", "2024-10-15", langs("th")),
	day("15 toukokuuta 2024", "2024-05-15", langs("fi")),
	day("před 3 dny", "2024-05-19", langs("cs")),
	day("15 tháng 5 năm 2024", "2024-05-15", langs("vi")),
}

func allCases() []dateCase {
	var all []dateCase
	for _, group := range [][]dateCase{machineCases, rfcCases, englishCases, numericCases, languageCases, cjkCases,
		missingYearCases, relativeCases, zoneCases, rangeCases, junkCases, fallbackCases} {
		all = append(all, group...)
	}
	return all
}

func mustLoad(tb testing.TB, name string) *time.Location {
	tb.Helper()
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

func mustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatalf("bad test time %q: %v", s, err)
	}
	return t
}

func (c dateCase) options(tb testing.TB) crawlkeeper.DateOptions {
	now := testNow
	if c.now != "" {
		now = c.now
	}
	return crawlkeeper.DateOptions{
		Location: mustLoad(tb, c.loc), Order: c.order, Locale: c.locale, Languages: c.langs,
		Now: mustTime(tb, now), RangeStart: c.start, Upcoming: c.up,
	}
}

func (c dateCase) name() string {
	n := strconv.Quote(c.in)
	if len(n) > 40 {
		n = n[:40]
	}
	for _, x := range []string{c.loc, c.order, c.locale, strings.Join(c.langs, ","), c.now} {
		if x != "" {
			n += "/" + x
		}
	}
	if c.start {
		n += "/start"
	}
	if c.up {
		n += "/upcoming"
	}
	return n
}

func TestParseDate(t *testing.T) {
	cases := allCases()
	if len(cases) < 300 {
		t.Fatalf("only %d cases", len(cases))
	}
	p := New()
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			got, err := p.ParseDate(c.in, c.options(t))
			if c.want == "" {
				if err == nil {
					t.Fatalf("got %s (date only %v), want an error", got.Time.Format(time.RFC3339Nano), got.DateOnly)
				}
				if code := crawlkeeper.ErrorCode(err); code != crawlkeeper.EINVALID {
					t.Errorf("error code %q, want %q", code, crawlkeeper.EINVALID)
				}
				if q := strconv.Quote(c.in); len(q) < 100 && !strings.Contains(err.Error(), q) {
					t.Errorf("error %q does not quote the input", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if s := got.Time.Format(time.RFC3339Nano); s != c.want {
				t.Errorf("got %s, want %s", s, c.want)
			}
			if got.DateOnly != c.only {
				t.Errorf("date only %v, want %v", got.DateOnly, c.only)
			}
		})
	}
}
