package dates

import (
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tNum tokKind = iota + 1
	tWord
	tSep
)

// token is one number, word or run of separators in the normalized text.
type token struct {
	kind tokKind
	nd   uint8 // number: how many digits were written
	c    byte  // separator: its first punctuation byte, or ' ' when it is only space
	last byte  // separator: its last punctuation byte
	// separator: more than one punctuation byte; spaces before and after the
	// punctuation (a spaced hyphen joins a range, a bare one a date)
	multi, spB, spA bool
	tilde           bool  // separator: contains '~', the common form of range dashes
	v               int64 // number: its value, saturated
	i, j            int32 // span in lexer.buf
	w               *word // word: what it means; nil when unknown
}

// maxTokens bounds the work done on one string. Real dates have fewer than
// 30 tokens; longer text is not a date.
const maxTokens = 48

// maxInput is the longest text, in bytes, that the hand-written parser and
// the fallback read. Longer text is not a date but a paragraph.
const maxInput = 200

// lexer holds the normalized text and its tokens. Its arrays keep common
// inputs free of heap allocation; lexers are recycled through a pool.
type lexer struct {
	buf      []byte
	toks     []token
	hasDigit bool
	unknown  bool    // a word that no table knows
	weak     bool    // a weak word (word.weak): the tables know it only in part
	relative bool    // a word that only a relative date uses
	t        *tables // the word tables, fetched once per text
	bufArr   [256]byte
	tokArr   [maxTokens]token
	dotArr   [24]byte // dotted initials read together (dotted)
}

// lex normalizes s and cuts it into tokens. It returns false when the text
// is too long to be a date.
func (lx *lexer) lex(s string) bool {
	lx.t = wordTables()
	lx.hasDigit, lx.unknown, lx.relative, lx.weak = false, false, false, false
	lx.buf = appendNorm(lx.bufArr[:0], s)
	lx.toks = lx.tokArr[:0]
	b := lx.buf
	for i := 0; i < len(b); {
		if len(lx.toks) == maxTokens {
			return false
		}
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			j := i
			var v int64
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				if j-i < 18 {
					v = v*10 + int64(b[j]-'0')
				}
				j++
			}
			nd := j - i
			if nd > 255 {
				nd = 255
			}
			lx.toks = append(lx.toks, token{kind: tNum, v: v, nd: uint8(nd), i: int32(i), j: int32(j)})
			lx.hasDigit = true
			i = j
		case isWordStart(b, i):
			i = lx.lexWord(i)
		default:
			j := i
			t := token{kind: tSep, i: int32(i)}
			for j < len(b) && !(b[j] >= '0' && b[j] <= '9') && !isWordStart(b, j) {
				ch := b[j]
				_, size := utf8.DecodeRune(b[j:])
				switch {
				case ch == ' ':
					if t.c == 0 {
						t.spB = true
					} else {
						t.spA = true
					}
				default:
					if ch == '~' {
						t.tilde = true
					}
					if ch >= utf8.RuneSelf {
						ch = '?'
					}
					if t.c == 0 || t.c == ' ' {
						t.c = ch
					} else if ch != t.c || t.spA {
						t.multi = true
					}
					t.last = ch
					t.spA = false
				}
				j += size
			}
			if t.c == 0 {
				t.c = ' '
			}
			t.j = int32(j)
			lx.toks = append(lx.toks, t)
			i = j
		}
	}
	lx.mergePhrases()
	for k := range lx.toks {
		t := &lx.toks[k]
		if t.kind != tWord {
			continue
		}
		if t.w == nil {
			lx.unknown = true
			continue
		}
		if t.w.looksRelative() {
			lx.relative = true
		}
		if t.w.weak {
			lx.weak = true
		}
	}
	return true
}

// isWordStart reports whether a word starts at b[i]: a letter, or a CJK
// character.
func isWordStart(b []byte, i int) bool {
	c := b[i]
	if c < utf8.RuneSelf {
		return c >= 'a' && c <= 'z'
	}
	r, _ := utf8.DecodeRune(b[i:])
	return isLetter(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r)
}

// lexWord reads the word at b[i] and returns the index after it. Runs of
// CJK characters are cut by longest match against the tables, since they
// are written without spaces ("2024年5月15日星期三").
func (lx *lexer) lexWord(i int) int {
	b := lx.buf
	r, size := utf8.DecodeRune(b[i:])
	if isCJK(r) {
		// Try the longest known word first, up to five characters.
		ends := [5]int{}
		n := 0
		for j := i; j < len(b) && n < len(ends); {
			r, size := utf8.DecodeRune(b[j:])
			if !isCJK(r) {
				break
			}
			j += size
			ends[n] = j
			n++
		}
		for k := n - 1; k >= 0; k-- {
			if w := lx.t.words[string(b[i:ends[k]])]; w != nil {
				lx.toks = append(lx.toks, token{kind: tWord, i: int32(i), j: int32(ends[k]), w: w})
				return ends[k]
			}
		}
		lx.toks = append(lx.toks, token{kind: tWord, i: int32(i), j: int32(i + size)})
		return i + size
	}
	// "a.m." and "p.m." are one word.
	if (b[i] == 'a' || b[i] == 'p') && i+2 < len(b) && b[i+1] == '.' {
		k := i + 2
		if b[k] == ' ' && k+1 < len(b) {
			k++
		}
		if b[k] == 'm' && (k+1 == len(b) || !isWordStart(b, k+1)) {
			end := k + 1
			if end < len(b) && b[end] == '.' {
				end++
			}
			key := "am"
			if b[i] == 'p' {
				key = "pm"
			}
			lx.toks = append(lx.toks, token{kind: tWord, i: int32(i), j: int32(end), w: lx.t.words[key]})
			return end
		}
	}
	// Meridiem markers written as dotted initials ("m.d.", "N.U.", "د.ن",
	// "म.नं."): one word when the tables know them as such ("m.d.").
	// Latin initials are single letters, others up to three characters.
	if maybeDotted(b, i) {
		if k, key, n := lx.dotted(i); n >= 2 {
			if w := lx.t.words[string(key)]; w != nil && w.kind == kAMPM {
				lx.toks = append(lx.toks, token{kind: tWord, i: int32(i), j: int32(k), w: w})
				return k
			}
		}
	}
	j := i
	hyphen := -1
	for j < len(b) {
		r, size := utf8.DecodeRune(b[j:])
		if isLetter(r) && !isCJK(r) {
			j += size
			continue
		}
		// An apostrophe or hyphen between letters belongs to the word:
		// "aujourd'hui", "avant-hier".
		if (r == '\'' || r == '-') && j+1 < len(b) && j > i {
			r2, _ := utf8.DecodeRune(b[j+1:])
			if isLetter(r2) && !isCJK(r2) {
				if r == '-' && hyphen < 0 {
					hyphen = j
				}
				j++
				continue
			}
		}
		break
	}
	w := lx.t.words[string(b[i:j])]
	if w == nil && hyphen > 0 {
		// Not a hyphenated word: read the part before the hyphen alone and
		// let the hyphen be a separator ("mai-juin").
		j = hyphen
		w = lx.t.words[string(b[i:j])]
	}
	if w == nil {
		// "d'avril", "l'an": the elided article says nothing. What
		// follows it is a word of two letters or more ("neng'u" is no
		// "u").
		for k := j - 1; k > i; k-- {
			if b[k] == '\'' {
				if j-k > 2 {
					w = lx.t.words[string(b[k+1:j])]
				}
				break
			}
		}
	}
	lx.toks = append(lx.toks, token{kind: tWord, i: int32(i), j: int32(j), w: w})
	return j
}

// maybeDotted is the cheap test before dotted: a dot right after the
// first letter, or within the first few bytes of a word of another script.
func maybeDotted(b []byte, i int) bool {
	if b[i] < utf8.RuneSelf {
		return i+1 < len(b) && b[i+1] == '.'
	}
	for k := i + 1; k < len(b) && k <= i+12; k++ {
		switch b[k] {
		case '.':
			return true
		case ' ':
			return false
		}
	}
	return false
}

// dotted reads dotted initials at b[i]: it returns the index after them,
// their letters each followed by a dot ("m.d." for "m.d" and "m.d.") and
// how many initials there were. Only text with
// a dot right after a short run of letters is looked at.
func (lx *lexer) dotted(i int) (end int, key []byte, n int) {
	b := lx.buf
	key = lx.dotArr[:0]
	k := i
	for n < 4 && k < len(b) {
		j, runes := k, 0
		for j < len(b) && runes <= 3 {
			r, size := utf8.DecodeRune(b[j:])
			if !isLetter(r) || isCJK(r) {
				break
			}
			j += size
			runes++
		}
		if runes == 0 || runes > 3 || b[k] < utf8.RuneSelf && runes > 1 || len(key)+j-k+1 > len(lx.dotArr) {
			break
		}
		if j < len(b) && b[j] != '.' || j == len(b) && n == 0 {
			break
		}
		key = append(key, b[k:j]...)
		key = append(key, '.')
		n++
		k = j
		if k == len(b) {
			break
		}
		k++ // the dot
	}
	if n < 2 {
		return 0, nil, 0
	}
	return k, key, n
}

// mergePhrases replaces runs of words that form a known phrase ("il y a",
// "day before yesterday") by one word token. Phrases are stored with single
// spaces, which is what normalization leaves between words.
func (lx *lexer) mergePhrases() {
	if lx.t.maxPhraseWords < 2 {
		return
	}
	ts := lx.toks
	out := ts[:0]
	for k := 0; k < len(ts); k++ {
		t := ts[k]
		if t.kind == tWord && lx.t.phraseStarts[string(lx.buf[t.i:t.j])] {
			for n := lx.t.maxPhraseWords; n >= 2; n-- {
				last := k + 2*(n-1)
				if last >= len(ts) || !lx.spacedWords(ts[k:last+1]) {
					continue
				}
				if w := lx.t.words[string(lx.buf[t.i:ts[last].j])]; w != nil {
					t.j, t.w = ts[last].j, w
					k = last
					break
				}
			}
		}
		out = append(out, t)
	}
	lx.toks = out
}

// spacedWords reports whether ts alternates words and single spaces.
func (lx *lexer) spacedWords(ts []token) bool {
	for k, t := range ts {
		if k%2 == 0 && t.kind != tWord {
			return false
		}
		if k%2 == 1 && (t.kind != tSep || t.j-t.i != 1 || t.c != ' ') {
			return false
		}
	}
	return true
}
