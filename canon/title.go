package canon

import (
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

// Title returns the form titles are compared in. With fold it is Unicode
// NFKC (full-width and compatibility characters to their plain forms),
// full case folding (golang.org/x/text/cases: "Straße" and "STRASSE" are
// one title), invisible format characters removed (soft hyphens,
// zero-width spaces, direction marks, variation selectors), and white space
// trimmed and collapsed; this is Unicode's NFKC_Casefold, the form meant
// for comparing identifiers. Without fold only white space is collapsed.
func Title(s string, fold bool) string {
	if !fold {
		return Space(s)
	}
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
	s = strings.Map(foldCherokee, s)
	// Folding can leave text that is not NFKC (NFKC_Casefold applies
	// NFKC again for that reason).
	return Space(norm.NFKC.String(s))
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
