package crawlkeeper

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:generate go run ./internal/foldgen/cmd searchfold_table.go

// Search text is what every store's full-text index reads: the record's
// title and text fields, folded and tokenised once, in Go, at prepare time
// (in parallel, before the store's single write per batch). Each engine
// then only has to split on spaces, so SQLite FTS5, PostgreSQL, MySQL/
// MariaDB and MongoDB index the same tokens and a query finds the same
// records on all of them:
//
//   - Folding: compatibility decomposition, Latin/Greek/Cyrillic
//     diacritics removed, case folded (see FoldSearchText). "Müller",
//     "MÜLLER" and "muller" are one token; so are "Ёлка" and "елка".
//   - Tokens are runs of letters, digits and marks; everything else
//     separates them. A token longer than MaxSearchToken runes is cut
//     (MySQL/MariaDB do not index tokens longer than 84 characters).
//   - Chinese, Japanese and Korean have no spaces between words: each run
//     of Han, kana or Hangul becomes overlapping bigrams plus its last
//     character alone ("東京都" → "東京 京都 都"). Every character then
//     starts a token, so a one-character query is a prefix query, and a
//     longer CJK query word is the phrase of its bigrams.
//
// The stored search text is the tokens joined by single spaces.

// MaxSearchToken bounds the runes of one search token.
const MaxSearchToken = 60

// MaxSearchText bounds the bytes of a record's search text; the fields
// beyond it are not indexed. It keeps the index cost of one huge item
// bounded.
const MaxSearchText = 32 << 10

// DefaultSearchFieldCount is how many text fields, besides the title, a
// source without search_fields indexes: its longest ones.
const DefaultSearchFieldCount = 3

// FoldSearchText folds s for search: each code point is replaced by its
// compatibility decomposition without the combining diacritics of Latin,
// Greek and Cyrillic, recomposed, and case folded. The table comes from
// golang.org/x/text (internal/foldgen generates it), so the domain package
// needs only the standard library and folds the same under every Go
// release. Folding is per code point: a letter
// followed by a separate combining accent loses the accent too, as the
// accent alone folds to nothing.
func FoldSearchText(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		foldRune(&b, r)
	}
	return b.String()
}

func foldRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteByte(byte(r))
		return
	}
	if isStrippedMark(r) {
		return
	}
	if i := sort.Search(len(foldKeys), func(i int) bool { return foldKeys[i] >= r }); i < len(foldKeys) && foldKeys[i] == r {
		b.WriteString(foldVals[i])
		return
	}
	b.WriteRune(r)
}

// FoldUnicodeVersion is the Unicode version of the folding table.
func FoldUnicodeVersion() string { return foldUnicodeVersion }

// isStrippedMark reports whether r is a combining diacritic that folding
// drops (internal/foldgen.Stripped has the same ranges).
func isStrippedMark(r rune) bool {
	return (r >= 0x0300 && r <= 0x036F) || (r >= 0x1AB0 && r <= 0x1AFF) ||
		(r >= 0x1DC0 && r <= 0x1DFF) || (r >= 0x20D0 && r <= 0x20FF) ||
		(r >= 0xFE20 && r <= 0xFE2F)
}

// isCJK reports whether r is written without spaces between words: Han,
// hiragana, katakana (with the prolonged sound mark) and Hangul.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 0x30FC
}

// isWordRune reports whether r belongs to a token.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (r >= 'A' && r <= 'Z')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.IsNumber(r)
}

// tokenSpan is one token of a text: its folded form and, for snippets, the
// byte range of the original text it came from.
type tokenSpan struct {
	tok        string
	start, end int
}

// Token kinds of scanTokens: a CJK run's last character alone is a tail
// token (tailOne when the run has one character).
const (
	tokPlain = iota
	tokTail
	tokTailOne
)

// scanTokens calls fn with each token of s in order, with its kind.
func scanTokens(s string, fn func(t tokenSpan, kind int)) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		if isCJK(r) {
			// Collect the run's rune offsets.
			offs := make([]int, 0, 16)
			j := i
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isCJK(r2) {
					break
				}
				offs = append(offs, j)
				j += n2
			}
			offs = append(offs, j)
			runes := len(offs) - 1
			for k := 0; k+1 < runes; k++ {
				fn(tokenSpan{tok: FoldSearchText(s[offs[k]:offs[k+2]]), start: offs[k], end: offs[k+2]}, tokPlain)
			}
			kind := tokTail
			if runes == 1 {
				kind = tokTailOne
			}
			fn(tokenSpan{tok: FoldSearchText(s[offs[runes-1]:j]), start: offs[runes-1], end: j}, kind)
			i = j
			continue
		}
		j := i
		for j < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r2) || isCJK(r2) {
				break
			}
			j += n2
		}
		// Folding may produce separators (a fraction slash) or CJK (a
		// squared "㍻"): such a word is split again.
		folded := FoldSearchText(s[i:j])
		if simpleToken(folded) {
			fn(tokenSpan{tok: capToken(folded), start: i, end: j}, tokPlain)
		} else {
			scanTokensFolded(folded, func(tok string, kind int) {
				fn(tokenSpan{tok: tok, start: i, end: j}, kind)
			})
		}
		i = j
	}
}

// scanTokensFolded tokenises text that is already folded.
func scanTokensFolded(s string, fn func(tok string, kind int)) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i
		cjk := isCJK(r)
		for j < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r2) || isCJK(r2) != cjk {
				break
			}
			j += n2
		}
		if !cjk {
			fn(capToken(s[i:j]), tokPlain)
			i = j
			continue
		}
		rs := []rune(s[i:j])
		for k := 0; k+1 < len(rs); k++ {
			fn(string(rs[k:k+2]), tokPlain)
		}
		kind := tokTail
		if len(rs) == 1 {
			kind = tokTailOne
		}
		fn(string(rs[len(rs)-1]), kind)
		i = j
	}
}

// simpleToken reports whether a folded word is one token as it is.
func simpleToken(s string) bool {
	for _, r := range s {
		if !isWordRune(r) || isCJK(r) {
			return false
		}
	}
	return s != ""
}

func capToken(s string) string {
	if len(s) <= MaxSearchToken {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxSearchToken {
			return s[:i]
		}
		n++
	}
	return s
}

// SearchTokens returns the search tokens of s, as the index stores them.
func SearchTokens(s string) []string {
	var out []string
	scanTokens(s, func(t tokenSpan, _ int) { out = append(out, t.tok) })
	return out
}

// appendSearchText appends the tokens of s to b, space-separated, up to
// MaxSearchText bytes.
func appendSearchText(b *strings.Builder, s string) {
	if isASCII(s) {
		appendASCIITokens(b, s)
		return
	}
	scanTokens(s, func(t tokenSpan, _ int) {
		if b.Len()+1+len(t.tok) > MaxSearchText {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.tok)
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendASCIITokens is appendSearchText for ASCII text, the common case
// of crawled text in Latin script, without decoding runes: the tokens are
// the runs of letters and digits, lower-cased. It gives what scanTokens
// gives (TestSearchTokensASCIIFastPath compares them).
func appendASCIITokens(b *strings.Builder, s string) {
	i := 0
	for i < len(s) {
		for i < len(s) && !asciiWord(s[i]) {
			i++
		}
		j := i
		for j < len(s) && asciiWord(s[j]) {
			j++
		}
		if j == i {
			return
		}
		n := min(j-i, MaxSearchToken)
		if b.Len()+1+n > MaxSearchText {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for k := i; k < i+n; k++ {
			c := s[k]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
		i = j
	}
}

func asciiWord(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')
}

// SearchText returns the search text of an item under a source's policy:
// the folded tokens of its title, then of its search fields (see
// SearchFields), joined by single spaces. It is empty when the source's
// search is off.
func SearchText(pol *SourcePolicy, title string, item map[string]any) string {
	if !pol.Search {
		return ""
	}
	fields := pol.searchFieldsOf(item)
	var b strings.Builder
	size := len(title)
	for _, f := range fields {
		if s, ok := item[f].(string); ok {
			size += len(s) + 1
		}
	}
	b.Grow(min(size+16, MaxSearchText))
	appendSearchText(&b, title)
	for _, f := range fields {
		appendFieldText(&b, item[f])
	}
	return b.String()
}

func appendFieldText(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		appendSearchText(b, x)
	case json.Number:
		appendSearchText(b, x.String())
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, json.Number:
				appendFieldText(b, e)
			}
		}
	}
}

// searchFieldsOf returns the fields of item whose text is indexed besides
// the title: the configured search_fields present in the item, in their
// configured order; without configuration, the DefaultSearchFieldCount
// longest string fields that are not the title, a key field holding a URL,
// the HTML field, an event field, a volatile field or a value that is a
// URL (see SourceConfig.SearchFields).
func (p *SourcePolicy) searchFieldsOf(item map[string]any) []string {
	if p.SearchFields != nil {
		out := make([]string, 0, len(p.SearchFields))
		for _, f := range p.SearchFields {
			if f == "title" {
				continue
			}
			if _, ok := item[f]; ok {
				out = append(out, f)
			}
		}
		return out
	}
	type cand struct {
		name string
		n    int
	}
	var cands []cand
	for k, v := range item {
		s, ok := v.(string)
		if !ok || k == "title" || k == "url" || k == p.HTMLField || p.IsEventField(k) || p.IsVolatile(k) {
			continue
		}
		if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
			continue
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		cands = append(cands, cand{k, len(s)})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].n != cands[j].n {
			return cands[i].n > cands[j].n
		}
		return cands[i].name < cands[j].name
	})
	if len(cands) > DefaultSearchFieldCount {
		cands = cands[:DefaultSearchFieldCount]
	}
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.name
	}
	return out
}

// SearchSourceFields returns the fields of item whose text a search hit's
// snippet is taken from: the same fields SearchText indexes, title first.
func (p *SourcePolicy) SearchSourceFields(item map[string]any) []string {
	return append([]string{"title"}, p.searchFieldsOf(item)...)
}
