package crawlkeeper

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SearchExpr is a parsed search query: every term must hold. Stores render
// it for their engine (an FTS5 MATCH expression, a tsquery, a boolean-mode
// MATCH … AGAINST, a MongoDB $text search plus exact filters); the rules
// of the language live here once.
type SearchExpr struct {
	Terms []SearchTerm
}

// SearchTerm is one condition: its tokens appear next to each other in
// this order (one token: the word appears). Prefix makes the last token
// match any token that starts with it. Exclude inverts the term.
type SearchTerm struct {
	Tokens  []string
	Prefix  bool
	Exclude bool
}

// ParseSearch parses the query language:
//
//	word            records containing the word (every word must match)
//	"two words"     the words next to each other, in this order
//	pre*            a word starting with "pre"
//	-word, -"a b"   records without the word or phrase
//
// Words are folded and tokenised like the indexed text (SearchTokens), so
// case and diacritics never matter, "e-mail" is the phrase "e mail", and a
// Chinese or Japanese word is the phrase of its bigrams (one character
// alone matches every token starting with it). There is no OR: every term
// must match. A query without a word to find is an EINVALID error.
func ParseSearch(q string) (*SearchExpr, error) {
	expr := &SearchExpr{}
	seen := map[string]bool{}
	add := func(t SearchTerm) {
		if len(t.Tokens) == 0 {
			return
		}
		k := t.String()
		if !seen[k] {
			seen[k] = true
			expr.Terms = append(expr.Terms, t)
		}
	}
	i := 0
	for i < len(q) {
		r, n := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		exclude := false
		if r == '-' && i+1 < len(q) {
			r2, _ := utf8.DecodeRuneInString(q[i+1:])
			if !unicode.IsSpace(r2) {
				exclude = true
				i++
				r, n = r2, utf8.RuneLen(r2)
			}
		}
		if r == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			var body string
			if end < 0 {
				body, i = q[i+1:], len(q)
			} else {
				body, i = q[i+1:i+1+end], i+1+end+1
			}
			add(queryTerm(body, false, exclude))
			continue
		}
		j := i
		for j < len(q) {
			r2, n2 := utf8.DecodeRuneInString(q[j:])
			if unicode.IsSpace(r2) || r2 == '"' {
				break
			}
			j += n2
		}
		word := q[i:j]
		i = j
		prefix := strings.HasSuffix(word, "*")
		add(queryTerm(strings.TrimRight(word, "*"), prefix, exclude))
	}
	positive := 0
	for _, t := range expr.Terms {
		if !t.Exclude {
			positive++
		}
	}
	switch {
	case strings.TrimSpace(q) == "":
		return nil, Errorf(EINVALID, "empty search: give at least one word to find")
	case positive == 0:
		return nil, Errorf(EINVALID, "search %q has no word to find: add a word that is not excluded with -", q)
	case len(expr.Terms) > MaxSearchTerms:
		return nil, Errorf(EINVALID, "search has %d terms: use at most %d", len(expr.Terms), MaxSearchTerms)
	}
	return expr, nil
}

// queryTerm turns a word or a phrase's text into a term. A CJK run's last
// character alone is kept only where another token follows it in the term
// (the indexed text has it there too); a run of one character at the end
// becomes a prefix, so that it matches the bigram it starts.
func queryTerm(text string, prefix, exclude bool) SearchTerm {
	type tk struct {
		tok  string
		kind int
	}
	var toks []tk
	scanTokens(text, func(t tokenSpan, kind int) { toks = append(toks, tk{t.tok, kind}) })
	term := SearchTerm{Prefix: prefix, Exclude: exclude}
	for i, t := range toks {
		last := i == len(toks)-1
		if last && t.kind == tokTail {
			continue
		}
		if last && t.kind == tokTailOne {
			term.Prefix = true
		}
		term.Tokens = append(term.Tokens, t.tok)
	}
	if len(term.Tokens) == 0 {
		term.Prefix = false
	}
	return term
}

// String writes the term back in the query language, folded.
func (t SearchTerm) String() string {
	s := strings.Join(t.Tokens, " ")
	if len(t.Tokens) > 1 {
		s = `"` + s + `"`
	}
	if t.Prefix {
		s += "*"
	}
	if t.Exclude {
		s = "-" + s
	}
	return s
}

// String writes the expression back in the query language.
func (e *SearchExpr) String() string {
	parts := make([]string, len(e.Terms))
	for i, t := range e.Terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, " ")
}

// Positive returns the terms that must match, without the excluded ones.
func (e *SearchExpr) Positive() []SearchTerm {
	var out []SearchTerm
	for _, t := range e.Terms {
		if !t.Exclude {
			out = append(out, t)
		}
	}
	return out
}

// Matches reports whether a record with the search text text (tokens
// joined by single spaces, as SearchText makes it) matches e. It is the
// reference semantics every store's rendering must agree with.
func (e *SearchExpr) Matches(text string) bool {
	toks := strings.Fields(text)
	for _, t := range e.Terms {
		if t.matches(toks) == t.Exclude {
			return false
		}
	}
	return true
}

func (t SearchTerm) matches(toks []string) bool {
	n := len(t.Tokens)
	for i := 0; i+n <= len(toks); i++ {
		ok := true
		for k, want := range t.Tokens {
			got := toks[i+k]
			if k == n-1 && t.Prefix {
				ok = strings.HasPrefix(got, want)
			} else {
				ok = got == want
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Regexp returns a regular expression (RE2 and PCRE syntax) that matches
// a search text containing the term, whose tokens are stored each followed
// by suffix (MySQL stores "tok__", see the mysql package; others "").
// Stores whose index cannot express a term exactly (MongoDB's $text has no
// prefixes; MySQL has no prefix inside a phrase) add it as a filter.
func (t SearchTerm) Regexp(suffix string) string {
	var b strings.Builder
	b.WriteString("(^| )")
	for i, tok := range t.Tokens {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(regexp.QuoteMeta(tok))
		if i < len(t.Tokens)-1 || !t.Prefix {
			b.WriteString(regexp.QuoteMeta(suffix))
		}
	}
	if !t.Prefix {
		b.WriteString("( |$)")
	}
	return b.String()
}
