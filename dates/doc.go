// Package dates reads the dates web sites publish, in the formats and
// languages crawlers meet, and implements crawlkeeper.DateParser.
//
// Most of the work is hand-written, for two reasons. Speed: crawls deliver
// millions of dates, most in a handful of forms, and the fallback library
// costs about two milliseconds a call behind a mutex. Coverage: forms the
// library does not read, or reads loosely, are decided here with rules that
// refuse rather than guess. The hand-written parts are:
//
//   - machine formats without allocation (machine.go): RFC 3339 and ISO 8601
//     extended and basic forms with or without a zone, ISO week dates, and
//     Unix epoch seconds and milliseconds;
//   - a general parser for everything else that tables can describe
//     (normalize.go, lex.go, words.go, absolute.go): RFC 1123, RFC 850, ANSI
//     C, Unix and Ruby dates; numeric dates with "-", "/", "." or spaces,
//     ambiguous ones read in the source's day/month order; month and weekday
//     names, genitives and abbreviations in English, German, French, Spanish,
//     Italian, Portuguese, Dutch, Russian, Polish, Turkish, Arabic, Persian
//     (with the Persian solar calendar) and Hindi, in any script's digits;
//     Chinese, Japanese and Korean dates with their markers, Japanese eras,
//     full-width digits; times with am/pm and their CJK forms, zone offsets
//     and common zone abbreviations;
//   - ranges ("May 15–17, 2024", "2024/5/15～5/17"), whose ends complete each
//     other and of which the options pick the start or the end;
//   - relative dates (relative.go) in the same languages: "yesterday", "3
//     days ago", "in 2 weeks", "last Monday", "3日前", "3일 전".
//
// Text the tables do not fully know, with at least one digit, goes to
// github.com/markusmobius/go-dateparser (fallback.go), with the source's
// language hints and date order. Its answers are checked (every number
// written must be a part of the date read, and a day must be named) and
// cached per string and options, since crawls repeat the same strings.
// Text without a digit is never sent to it: the library reads words such
// as "N/A" as dates.
//
// A date without a year takes the year of DateOptions.Now. A two-digit
// year follows the standard library: 69-99 are 1969-1999, 00-68 are
// 2000-2068.
package dates
