package dates

import (
	"unicode"
	"unicode/utf8"
)

// The guard keeps go-dateparser's readings honest. The library is
// generous: it reads "N/A" as a Thursday in Estonian, "$12.99" as December
// 1999 and "v1.24.2" as a Czech date, because every token of those strings
// is a word or a number in some language it knows. Text reaches the
// library only when the hand-written parser could not read it, and the
// library's answer is kept only when it passes the checks below (see
// worthAsking before the call and the accept* functions after it).

// worthAsking reports whether text the hand-written parser could not read
// may be sent to the library at all. Its rules describe shapes that are
// never dates, whatever the language:
//   - more than 96 bytes or 12 words: a sentence, not a date;
//   - no letters: numbers and punctuation alone (bare numbers, versions,
//     phone numbers, scores, fractions) are read by the hand-written
//     parser or not at all;
//   - a number of five digits or more (but eight, a compact date): phone
//     numbers, ids, amounts;
//   - letters glued to the front of a number ("v1", "A4", "S03E05", "H1")
//     or a single letter between digits ("1e6"): versions, codes, sizes;
//   - a word that names something countable or a placeholder ("comments",
//     "page", "version", "tel", "EUR", "TBA");
//   - a score or ratio: a colon before a one-digit number ("2:1 win",
//     "3:0"); times write their minutes with two digits.
func worthAsking(s string, lx *lexer) bool {
	// Dates are short; the library tries every language on a sentence
	// and can take a tenth of a second to give up.
	if len(s) > maxAsked {
		return false
	}
	hasLetter := false
	nums, words := 0, 0
	for k := range lx.toks {
		t := &lx.toks[k]
		switch t.kind {
		case tWord:
			hasLetter = true
			if words++; words > maxAskedWords {
				return false
			}
			if lx.t.noiseWords[string(lx.buf[t.i:t.j])] {
				return false
			}
		case tNum:
			nums++
			if t.nd > 4 && t.nd != 8 {
				return false
			}
		}
	}
	if !hasLetter || nums > 8 {
		return false
	}
	// An open range ("2024-05-15 to", "until May 15") is the hand-written
	// parser's: the library knows no ranges and reads the words around
	// the date as something else ("to" is Thursday in Finnish).
	if edgeRangeWord(lx) {
		return false
	}
	return !gluedCode(lx) && !scoreShape(lx)
}

// scoreShape reports a number, a bare colon and a number of one digit:
// a score or a ratio, never a time.
func scoreShape(lx *lexer) bool {
	ts := lx.toks
	for k := 2; k < len(ts); k++ {
		sep := ts[k-1]
		if ts[k].kind == tNum && ts[k].nd == 1 && ts[k-2].kind == tNum &&
			sep.kind == tSep && sep.c == ':' && !sep.multi && !sep.spB && !sep.spA &&
			(k+1 == len(ts) || ts[k+1].kind != tSep || ts[k+1].c != ':') {
			return true
		}
	}
	return false
}

// edgeRangeWord reports a range word of the tables first or last in the
// text.
func edgeRangeWord(lx *lexer) bool {
	first, last := -1, -1
	for k := range lx.toks {
		if lx.toks[k].kind != tSep {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	for _, k := range []int{first, last} {
		if k < 0 {
			continue
		}
		if w := lx.toks[k].w; lx.toks[k].kind == tWord && w != nil && w.kind == kRangeSep {
			return true
		}
	}
	return false
}

// signOfNonDate reports a character no date is written with: a currency
// sign, percent, degree, a superscript, a numbering sign or a rating
// star. Text with one is a price, a share, a temperature, an area or a
// count, whichever parser looks at it.
func signOfNonDate(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '%' || c == '$' || c == '#' {
				return true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size - 1
		if r < 0x00A2 || r >= 0x0800 && r < 0x0E3F || r > 0x0E3F && r < 0x17DB || r > 0x17DB && r < 0x2030 {
			continue // letters of most scripts: no sign among them
		}
		switch {
		case r == '°', r == '²', r == '³', r == '‰', r == '№', r == '★', r == '☆', unicode.Is(unicode.Sc, r):
			return true
		}
	}
	return false
}

// Bounds of the text sent to the library: the longest dates in the corpus
// (a weekday, a day, a month, a year, a time, a zone and an era marker)
// are about sixty bytes and ten words.
const (
	maxAsked      = 96
	maxAskedWords = 12
)

// gluedCode reports letters written against the front of a number ("v1",
// "S03", "H1") or one letter between two numbers ("1e6"). Dates glue
// letters only behind numbers ("3pm", "15th", "10h30") or between them in
// scripts without spaces ("2024年5月"), or use "T" between a date and a
// time.
func gluedCode(lx *lexer) bool {
	ts := lx.toks
	for k := 0; k+1 < len(ts); k++ {
		w, n := &ts[k], &ts[k+1]
		if w.kind != tWord || n.kind != tNum || w.j != n.i {
			continue
		}
		r, _ := utf8.DecodeRune(lx.buf[w.i:])
		if !isLatinLike(r) {
			continue
		}
		afterNum := k > 0 && ts[k-1].kind == tNum && ts[k-1].j == w.i
		if !afterNum {
			return true
		}
		if word := lx.buf[w.i:w.j]; len(word) == 1 && word[0] != 't' && word[0] != 'h' {
			return true
		}
	}
	return false
}

// isLatinLike reports letters of the alphabets that write spaces between
// words and numbers (Latin, Greek, Cyrillic, Armenian, Georgian).
func isLatinLike(r rune) bool {
	return r < 0x0590 || r >= 0x10A0 && r < 0x1100 || r >= 0x1E00 && r < 0x2000
}

// addNoiseWords adds the words that mark text as something other than a
// date: placeholders, counted things, units and currency codes. They are
// only consulted for words the date tables do not know.
func (t *tables) addNoiseWords() {
	for _, w := range []string{
		"tba", "tbc", "tbd", "nan", "null", "nil", "none", "undefined", "unknown", "pending", "asap",
		"version", "ver", "rev", "release", "build", "beta", "alpha", "rc", "lts", "sdk", "api",
		"tel", "phone", "fax", "mobile", "call", "whatsapp",
		"page", "pages", "seite", "chapter", "episode", "season", "vol", "volume", "issue", "edition", "part",
		"room", "gate", "platform", "floor", "level", "grade", "route", "highway", "bus", "flight", "seat", "seats",
		"size", "item", "items", "comment", "comments", "kommentare", "commentaires", "comentarios", "commenti", "reacties",
		"views", "likes", "shares", "stars", "star", "votes", "reviews", "results", "points", "pts", "followers",
		"sku", "isbn", "issn", "doi", "ref", "order", "id", "no", "nr", "nº",
		"km", "kg", "mg", "ml", "cl", "mb", "gb", "kb", "tb", "px", "cm", "mm", "ft", "lb", "lbs", "oz", "mph", "kmh", "kw", "sq",
		"usd", "eur", "gbp", "jpy", "cny", "rmb", "chf", "rub", "inr", "brl", "pln", "zl", "sek", "nok", "dkk", "czk", "huf",
		"aud", "cad", "nzd", "krw", "mxn", "zar", "try", "tl", "kr", "kč", "lei", "uah", "sgd", "hkd",
		"bedrooms", "zimmer", "openings", "positions",
		"experience", "erfahrung", "berufserfahrung", "read", "lecture",
	} {
		t.noiseWords[normalizeKey(w)] = true
	}
}

// strongWord reports whether the text has a word that can carry a date by
// itself: a word the tables know in a role other than filler, or any word
// of three letters or more (one for the scripts written without spaces).
// Text whose words are all one- or two-letter tokens ("N/A", "k.A.",
// "No. 7") is read by the library in some language as an abbreviation;
// such a reading is kept only when that language was one of the hints.
func strongWord(lx *lexer) bool {
	for k := range lx.toks {
		t := &lx.toks[k]
		if t.kind != tWord {
			continue
		}
		word := lx.buf[t.i:t.j]
		r, _ := utf8.DecodeRune(word)
		n := utf8.RuneCount(word)
		if w := t.w; w != nil {
			switch w.kind {
			case kFiller, kRangeSep, kRangeStart, kOrdinal, kCount:
				if w.kind2 == kNone || w.kind2 == kFiller || w.kind2 == kRangeSep || w.kind2 == kCount {
					continue
				}
			}
			if n >= 2 || !isLatinLike(r) {
				return true
			}
			continue
		}
		if n >= 3 || !isLatinLike(r) && (n >= 2 || isCJK(r) || r >= 0x0E00 && r < 0x1000) {
			return true
		}
	}
	return false
}

// longWord reports a word of four letters or more, or of a script
// written without Latin letters.
func longWord(lx *lexer) bool {
	for k := range lx.toks {
		t := &lx.toks[k]
		if t.kind != tWord {
			continue
		}
		word := lx.buf[t.i:t.j]
		if r, _ := utf8.DecodeRune(word); !isLatinLike(r) || utf8.RuneCount(word) >= 4 {
			return true
		}
	}
	return false
}

// monthWordPossible reports whether a word of the text may name a month:
// a month of the tables, or a word they do not know. Without one, a
// reading's month came from a number, and only a written year makes
// numbers a date ("1 of 10" is no 10 January).
func monthWordPossible(lx *lexer) bool {
	for k := range lx.toks {
		t := &lx.toks[k]
		if t.kind != tWord {
			continue
		}
		if t.w == nil || t.w.kind == kMonth || t.w.kind == kJalali || t.w.kind2 == kMonth {
			return true
		}
	}
	return false
}
