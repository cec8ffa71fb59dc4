package dates

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// latinFold maps accented Latin letters (U+00C0 to U+024F) to their base
// letters, so that "März", "marz" and "MÄRZ" meet in one table entry and a
// site that drops its accents is still read. Entries are strings because a
// few letters fold to two ("ß" to "ss"). The table is built on first use.
var latinFold = sync.OnceValue(func() *[0x250]string {
	var latinFold [0x250]string
	for r := rune(0xC0); r < 0x250; r++ {
		lower := unicode.ToLower(r)
		d := norm.NFD.String(string(lower))
		first, size := utf8.DecodeRuneInString(d)
		if first >= 'a' && first <= 'z' {
			rest := d[size:]
			allMarks := true
			for _, m := range rest {
				if !unicode.Is(unicode.Mn, m) {
					allMarks = false
				}
			}
			if allMarks {
				latinFold[r] = string(first)
			}
		}
	}
	for r, s := range map[rune]string{
		'ß': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
		'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'ħ': "h", 'Ħ': "h",
	} {
		latinFold[r] = s
	}
	markLoaded("latin fold")
	return &latinFold
})

// devanagariNukta maps the precomposed Devanagari letters with a nukta to
// their base letters; the nukta itself is dropped, so "फ़रवरी" written
// either way meets "फरवरी".
var devanagariNukta = [8]rune{0x0915, 0x0916, 0x0917, 0x091C, 0x0921, 0x0922, 0x092B, 0x092F}

// appendNorm appends the normalized form of s to dst: lower case, Latin
// accents removed, full-width forms and non-ASCII digits made ASCII, dashes
// and spaces unified, Arabic and Persian letter variants merged, and runs
// of white space collapsed to one space. Everything the parser compares is
// in this form, tables included, so that one spelling in a table matches
// every way sites write it.
func appendNorm(dst []byte, s string) []byte {
	space := true // drops leading space
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		if c < utf8.RuneSelf {
			r = rune(c)
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
		}
		r = mapRune(r)
		switch {
		case r < 0:
			continue
		case r == '(' && len(dst) > 0 && isASCIIAlnum(dst[len(dst)-1]):
			// Optional letters in brackets glued to a word or number
			// ("viru(n) 3 Deeg", "2023(e)ko", "3(a)") are read written out.
			if k := optionalLetters(s[i:]); k > 0 {
				for j := i; j < i+k; j++ {
					dst = append(dst, s[j]|0x20)
				}
				i += k + 1
				space = false
				continue
			}
		case r == ' ':
			if !space {
				dst = append(dst, ' ')
				space = true
			}
			continue
		}
		space = false
		switch {
		case r < utf8.RuneSelf:
			dst = append(dst, byte(r))
		case r < 0x250 && latinFold()[r] != "":
			dst = append(dst, latinFold()[r]...)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	if n := len(dst); n > 0 && dst[n-1] == ' ' {
		dst = dst[:n-1]
	}
	return dst
}

// mapRune returns the normalized form of one rune, ' ' for any space and a
// negative value for runes that are dropped (joiners, Arabic vowel marks).
func mapRune(r rune) rune {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		case r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			return ' '
		}
		return r
	}
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		return mapRune(r - 0xFEE0)
	case r == 0x3000, r == 0x00A0, r >= 0x2000 && r <= 0x200A, r == 0x202F, r == 0x205F,
		r == 0x0F0B, r == 0x0F0C: // the Tibetan tsheg ends a syllable: "ཟླ་བ་ལྔ་པ" is a phrase of four
		return ' '
	case r >= 0x200B && r <= 0x200F, r == 0x2060, r == 0xFEFF, r == 0x0640,
		r >= 0x064B && r <= 0x065F, r == 0x0670, r == 0x093C:
		return -1
	case r >= 0x0660 && r <= 0x0669: // Arabic-Indic digits
		return '0' + r - 0x0660
	case r >= 0x06F0 && r <= 0x06F9: // Persian digits
		return '0' + r - 0x06F0
	case r >= 0x0966 && r <= 0x096F: // Devanagari digits
		return '0' + r - 0x0966
	case r >= 0x09E6 && r <= 0x09EF: // Bengali digits
		return '0' + r - 0x09E6
	case r >= 0x0A66 && unicode.Is(unicode.Nd, r):
		// The other scripts' digits (Gujarati to Khmer and beyond): each
		// block is ten digits in a row.
		k := rune(0)
		for k < 9 && unicode.Is(unicode.Nd, r-k-1) {
			k++
		}
		return '0' + k%10
	case r == 0x2010, r == 0x2011, r == 0x2212:
		return '-'
	case r >= 0x2012 && r <= 0x2015, r == 0x301C, r == 0x2053, r == 0x223C:
		// En and em dashes and the wave dash only ever join the ends of a
		// range; "~" is their common form.
		return '~'
	case r == 0x3001, r == 0x060C, r == 0x066C:
		return ','
	case r == 0x3002, r == 0x066B, r == 0x2024:
		return '.'
	case r == 0x061B:
		return ';'
	case r == 0x2018, r == 0x2019, r == 0x02BC, r == 0x2032:
		return '\''
	case r >= 0x0958 && r <= 0x095F:
		return devanagariNukta[r-0x0958]
	case r == 0x0623, r == 0x0625, r == 0x0622, r == 0x0671: // alef variants
		return 0x0627
	case r == 0x0649, r == 0x06CC: // alef maqsura and Persian yeh
		return 0x064A
	case r == 0x0643: // Arabic kaf to Persian keheh
		return 0x06A9
	case r == 0x0451: // ё
		return 0x0435
	case r == 0x0130: // İ
		return 'i'
	}
	return unicode.ToLower(r)
}

func isASCIIAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// optionalLetters returns how many ASCII letters (one to three) start s
// before a closing bracket, or 0.
func optionalLetters(s string) int {
	k := 0
	for k < len(s) && k < 4 && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
		k++
	}
	if k == 0 || k > 3 || k >= len(s) || s[k] != ')' {
		return 0
	}
	return k
}

// normalizeKey normalizes a table entry.
func normalizeKey(s string) string {
	return string(appendNorm(nil, s))
}

// isCJK reports whether r is written without spaces between words, so that
// the lexer must cut runs of it into words by table look-up.
func isCJK(r rune) bool {
	return r >= 0x3040 && r <= 0x30FF || // Hiragana, Katakana
		r >= 0x3400 && r <= 0x4DBF || r >= 0x4E00 && r <= 0x9FFF || r >= 0xF900 && r <= 0xFAFF || // Han
		r == 0x3007 || r == 0x3005 || // 〇 and 々
		r >= 0xAC00 && r <= 0xD7AF || r >= 0x3130 && r <= 0x318F // Hangul
}
