package crawlkeeper

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Snippet sizes, in bytes of the original text: the context kept before
// the first match and the length of the whole passage.
const (
	snippetBefore = 60
	snippetLength = 240
)

// AddSnippets sets the snippet of each hit: a passage of the first indexed
// field (title last) with a match, the matching words marked. It reads the
// original item, so the snippet shows the text as the crawler sent it,
// with its case and accents, while matching uses the folded tokens.
// Snippets are built in Go from the page's hits only, which costs the same
// on every store and needs nothing from the engine.
func AddSnippets(page *SearchPage, expr *SearchExpr, cfg *Config) {
	if cfg == nil {
		cfg = &Config{}
	}
	m := newSnippetMatcher(expr)
	for i := range page.Hits {
		r := page.Hits[i].Record
		if r == nil {
			continue
		}
		page.Hits[i].Snippet = m.snippet(r, cfg)
	}
}

type snippetMatcher struct {
	exact  map[string]bool
	prefix []string
}

func newSnippetMatcher(expr *SearchExpr) *snippetMatcher {
	m := &snippetMatcher{exact: map[string]bool{}}
	for _, t := range expr.Positive() {
		for i, tok := range t.Tokens {
			if t.Prefix && i == len(t.Tokens)-1 {
				m.prefix = append(m.prefix, tok)
			} else {
				m.exact[tok] = true
			}
		}
	}
	return m
}

func (m *snippetMatcher) match(tok string) bool {
	if m.exact[tok] {
		return true
	}
	for _, p := range m.prefix {
		if strings.HasPrefix(tok, p) {
			return true
		}
	}
	return false
}

func (m *snippetMatcher) snippet(r *Record, cfg *Config) []SnippetPart {
	var item map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.Item))
	dec.UseNumber()
	if err := dec.Decode(&item); err != nil {
		item = nil
	}
	var texts []string
	if pol, err := cfg.Policy(r.Source); err == nil && item != nil {
		for _, f := range pol.searchFieldsOf(item) {
			if s := fieldPlainText(item[f]); s != "" {
				texts = append(texts, s)
			}
		}
	}
	texts = append(texts, r.Title)
	for _, s := range texts {
		if parts := m.passage(s); parts != nil {
			return parts
		}
	}
	if len(texts) > 0 {
		return []SnippetPart{{Text: cut(texts[0], 0, snippetLength)}}
	}
	return nil
}

func fieldPlainText(v any) string {
	switch x := v.(type) {
	case string:
		return NormalizeText(x)
	case json.Number:
		return x.String()
	case []any:
		var parts []string
		for _, e := range x {
			if s := fieldPlainText(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " · ")
	}
	return ""
}

// passage returns the marked passage of s around its first match, or nil
// when nothing in s matches.
func (m *snippetMatcher) passage(s string) []SnippetPart {
	type span struct{ start, end int }
	var spans []span
	scanTokens(s, func(t tokenSpan, _ int) {
		if !m.match(t.tok) {
			return
		}
		if n := len(spans); n > 0 && t.start <= spans[n-1].end {
			if t.end > spans[n-1].end {
				spans[n-1].end = t.end
			}
			return
		}
		spans = append(spans, span{t.start, t.end})
	})
	if len(spans) == 0 {
		return nil
	}
	from := runeStart(s, max(0, spans[0].start-snippetBefore))
	// Start after a space when one is near, so the passage opens on a
	// whole word.
	if from > 0 {
		if k := strings.IndexByte(s[from:spans[0].start], ' '); k >= 0 {
			from += k + 1
		}
	}
	to := runeStart(s, min(len(s), from+snippetLength))
	if to < spans[0].end {
		to = spans[0].end
	}
	var parts []SnippetPart
	if from > 0 {
		parts = append(parts, SnippetPart{Text: "…"})
	}
	pos := from
	for _, sp := range spans {
		if sp.start >= to {
			break
		}
		end := min(sp.end, to)
		if sp.start > pos {
			parts = append(parts, SnippetPart{Text: s[pos:sp.start]})
		}
		parts = append(parts, SnippetPart{Text: s[sp.start:end], Match: true})
		pos = end
	}
	if pos < to {
		parts = append(parts, SnippetPart{Text: s[pos:to]})
	}
	if to < len(s) {
		parts = append(parts, SnippetPart{Text: "…"})
	}
	// Merge neighbouring plain parts (the ellipses).
	out := parts[:0]
	for _, p := range parts {
		if n := len(out); n > 0 && !p.Match && !out[n-1].Match {
			out[n-1].Text += p.Text
			continue
		}
		out = append(out, p)
	}
	return out
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func cut(s string, from, n int) string {
	to := runeStart(s, min(len(s), from+n))
	if to < len(s) {
		return s[from:to] + "…"
	}
	return s[from:]
}

// validSearchLanguage reports whether name can be a PostgreSQL text
// search configuration name: it is written into SQL as a regconfig value,
// so it is limited to identifier characters (optionally schema-qualified).
func validSearchLanguage(name string) bool {
	if name == "" || len(name) > 63 {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r == '_':
		case (r >= '0' && r <= '9') || r == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
