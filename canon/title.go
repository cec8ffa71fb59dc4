package canon

import (
	"bytes"
	"html"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Space trims s and collapses every run of Unicode white space to one
// ASCII space.
func Space(s string) string {
	// Fast path: most titles are already clean.
	clean := true
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			clean = false
			break
		}
		sp := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		if sp && (prevSpace || c != ' ') {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// folders pools case folders: a cases.Caser keeps state between calls and
// must not be shared by goroutines (golang.org/x/text/cases).
var folders = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

// TitleOptions are one source's title rules. The zero value folds
// nothing and decodes HTML character references; TitleOptions{Fold: true}
// is the default.
type TitleOptions struct {
	// Fold compares titles in NFKC_Casefold with typographic quotes and
	// dashes as ASCII ones (Title). Off, only white space is collapsed.
	Fold bool
	// KeepEntities keeps HTML character references ("&amp;", "&#8217;")
	// as text; by default they are decoded, as a browser shows them.
	KeepEntities bool
}

// Title returns the form titles are compared in under the default rules
// for references (decoded) and fold as given. See TitleOptions.Title.
func Title(s string, fold bool) string { return TitleOptions{Fold: fold}.Title(s) }

// Title returns the form titles are compared in.
//
// HTML character references are decoded first, as a browser would show the
// title: crawlers that take a title out of HTML without decoding it
// deliver "Q&amp;A" and "It&#8217;s" where others deliver "Q&A" and
// "It’s", and some escape twice ("Q&amp;amp;A"); every such spelling is
// decoded until no reference is left (the HTML5 references of the standard
// library's html.UnescapeString). With KeepEntities they stay text.
//
// With Fold the title is then Unicode NFKC (full-width and compatibility
// characters to their plain forms), full case folding
// (golang.org/x/text/cases: "Straße" and "STRASSE" are one title),
// invisible format characters removed (soft hyphens, zero-width spaces,
// direction marks, variation selectors), and white space trimmed and
// collapsed; this is Unicode's NFKC_Casefold, the form meant for comparing
// identifiers. Typographic quotes and dashes are compared as the ASCII ones
// ("It’s" is "It's", "Berlin – Mitte" is "Berlin - Mitte"): WordPress and
// other publishing tools turn the one into the other in some places of a
// page and not in others. Without Fold only white space is collapsed.
func (o TitleOptions) Title(s string) string {
	if !o.Fold {
		s = Space(s)
		if o.KeepEntities {
			return s
		}
		return Space(decodeRefs(s, nil))
	}
	t := foldTitle(s)
	if o.KeepEntities {
		return t
	}
	// References are read in the folded text, so that folding cannot
	// make one ("&AMP;" and "＆ａｍｐ；" are "&amp;"), and each decoded
	// character is folded before the text around it is read again.
	for strings.IndexByte(t, '&') >= 0 {
		d := decodeRefs(t, foldPiece)
		if d == t {
			break
		}
		t = foldTitle(d)
	}
	return t
}

// foldTitle is NFKC_Casefold with white space collapsed (TitleOptions.Fold).
func foldTitle(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return asciiFold(s)
	}
	return Space(foldCore(s))
}

// foldPiece folds a decoded character for decodeRefs: ASCII by
// lower-casing it, anything else by foldCore.
func foldPiece(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return foldCore(s)
		}
	}
	return asciiLower(s)
}

// foldCore is foldTitle without the white-space rule, for a piece of a
// title: NFKC, invisible characters removed, full case folding, Cherokee
// to its capitals, typographic quotes and dashes to ASCII.
func foldCore(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		if ignorable(r) {
			return -1
		}
		return r
	}, s)
	c := folders.Get().(*cases.Caser)
	s = c.String(s)
	folders.Put(c)
	s = strings.Map(foldRune, s)
	// Folding can leave text that is not NFKC (NFKC_Casefold applies
	// NFKC again for that reason).
	return norm.NFKC.String(s)
}

// foldRune maps the runes case folding leaves apart that a title compares
// equal: Cherokee small letters (foldCherokee) and typographic quotes and
// dashes (foldPunct).
func foldRune(r rune) rune { return foldPunct(foldCherokee(r)) }

// foldPunct writes typographic apostrophes and quotes as ASCII ' and ", and
// hyphens and dashes as ASCII -. The quotes are the left and right single
// and double quotation marks, their low-9 and reversed forms and primes;
// the dashes are Unicode's hyphen, non-breaking hyphen, figure dash, en
// and em dash, horizontal bar and minus sign.
func foldPunct(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032':
		return '\''
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	}
	return r
}

// foldCherokee maps Cherokee small letters to their capitals, which is
// what Unicode's case folding does (CaseFolding.txt: AB70 → 13A0, 13F8 →
// 13F0). golang.org/x/text's Fold (v0.43.0) maps them the other way and
// capitals to small letters too, so its output was not stable: folding a
// folded title gave another title.
func foldCherokee(r rune) rune {
	switch {
	case r >= 0xAB70 && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0
	case r >= 0x13F8 && r <= 0x13FD:
		return r - 0x13F8 + 0x13F0
	}
	return r
}

// asciiFold is Title for ASCII text: lower-case letters and collapse white
// space in one pass.
func asciiFold(s string) string {
	if folded(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// folded reports whether ASCII text is already in its folded form: no
// upper-case letter, no white space but single inner spaces.
func folded(s string) bool {
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		sp := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		if 'A' <= c && c <= 'Z' || sp && (prevSpace || c != ' ') {
			return false
		}
		prevSpace = sp
	}
	return !prevSpace || s == ""
}

// ignorable reports the default-ignorable characters that NFKC_Casefold
// removes and scraped titles carry: format characters (soft hyphen,
// zero-width space and joiners, direction marks, the byte-order mark) and
// variation selectors. The prepended concatenation marks among the format
// characters are visible and stay.
func ignorable(r rune) bool {
	switch {
	case r < 0xad:
		return false
	case r >= 0x600 && r <= 0x605, r == 0x6dd, r == 0x70f, r == 0x890, r == 0x891, r == 0x8e2, r == 0x110bd, r == 0x110cd:
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || r == 0x34f || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0
}

// maxRef bounds the text read as one character reference: the longest
// named reference ("&CounterClockwiseContourIntegral;") is 33 bytes.
const maxRef = 40

// decodeRefs decodes the HTML character references of s until none is
// left, in one pass: a decoded character goes back in front of the text
// still to read, with the few bytes before it that could start a
// reference with it (from the last ampersand), so "&amp;amp;" is "&" and
// "&&#97;mp;" is "&". piece,
// when set, folds each decoded character first. The result has no
// reference left in it, and the work is linear in the length of s (each
// decoding shortens the text or removes an ampersand, and rereads at most
// maxRef bytes).
func decodeRefs(s string, piece func(string) string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	// in[r:] is the text still to read; pushed-back text goes in front of
	// r, with room made when there is none.
	in := []byte(s)
	r := 0
	out := make([]byte, 0, len(s))
	pushBack := func(p []byte) {
		if r < len(p) {
			grown := make([]byte, len(p)+len(in)-r+64)
			r2 := len(grown) - (len(in) - r)
			copy(grown[r2:], in[r:])
			in, r = grown, r2
		}
		r -= len(p)
		copy(in[r:], p)
	}
	for r < len(in) {
		i := bytes.IndexByte(in[r:], '&')
		if i < 0 {
			out = append(out, in[r:]...)
			break
		}
		out = append(out, in[r:r+i]...)
		r += i
		// The window is the reference candidate: up to the next '&' or
		// maxRef bytes. No reference spans an ampersand.
		end := len(in)
		if end-r > maxRef {
			end = r + maxRef
		}
		if j := bytes.IndexByte(in[r+1:end], '&'); j >= 0 {
			end = r + 1 + j
		}
		// A reference is "&#..." or "&name...".
		if end-r < 3 || !(in[r+1] == '#' || 'a' <= in[r+1]|0x20 && in[r+1]|0x20 <= 'z') {
			out = append(out, '&')
			r++
			continue
		}
		window := string(in[r:end])
		dec := html.UnescapeString(window)
		if dec == window {
			out = append(out, '&')
			r++
			continue
		}
		// The decoded text replaces the window. Its first character is
		// the reference's (the rest of the window is unchanged text).
		rest := dec[len(dec)-(len(window)-refLen(window, dec)):]
		ch := dec[:len(dec)-len(rest)]
		if piece != nil {
			ch = piece(ch)
		}
		r = end
		pushBack([]byte(rest))
		pushBack([]byte(ch))
		// The last ampersand output, when it is within maxRef bytes, may
		// start a reference with what was decoded: read it again. Those
		// before it cannot: a reference ends at the next ampersand.
		back := max(len(out)-maxRef, 0)
		if k := bytes.LastIndexByte(out[back:], '&'); k >= 0 {
			pushBack(out[back+k:])
			out = out[:back+k]
		}
	}
	return string(out)
}

// refLen returns how many bytes of window the decoded reference took: the
// window and its decoding end in the same text after the reference.
func refLen(window, dec string) int {
	n := 0
	for n < len(window) && n < len(dec) && window[len(window)-1-n] == dec[len(dec)-1-n] {
		n++
	}
	// The reference is at least "&" plus one byte; the decoded character
	// at least one byte.
	if n > len(window)-2 {
		n = len(window) - 2
	}
	if n > len(dec)-1 {
		n = len(dec) - 1
	}
	return len(window) - n
}
