package crawlkeeper

import (
	"regexp"
	"strings"
	"testing"
)

func TestSearchTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hello, World!", "hello world"},
		{"Müller MÜLLER muller", "muller muller muller"},
		{"Straße", "strasse"},
		{"Ёлка и ёж: ЁЖИК", "елка и еж ежик"},
		{"café-crème", "cafe creme"},
		{"ﬁnance Ｔｏｋｙｏ ２０２４", "finance tokyo 2024"},
		{"東京都", "東京 京都 都"},
		{"東京タワー", "東京 京タ タワ ワー ー"},
		{"北京大学2024年", "北京 京大 大学 学 2024 年"},
		{"iPhone発売", "iphone 発売 売"},
		{"서울에서", "서울 울에 에서 서"},
		{"a", "a"},
		{"", ""},
	} {
		if got := strings.Join(SearchTokens(c.in), " "); got != c.want {
			t.Errorf("SearchTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("x", 100)
	if got := SearchTokens(long); len(got) != 1 || len(got[0]) != MaxSearchToken {
		t.Errorf("a 100-rune word gives %v, want one token of %d runes", got, MaxSearchToken)
	}
}

func TestParseSearch(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Open Day", "open day"},
		{`"open day" campus`, `"open day" campus`},
		{"uni*", "uni*"},
		{"-closed open", "-closed open"},
		{`-"open day" campus`, `-"open day" campus`},
		{"e-mail", `"e mail"`},
		{"Müller", "muller"},
		{"東京都", `"東京 京都"`},
		{"東", "東*"},
		{`"東京 タワー"`, `"東京 京 タワ ワー"`},
		{"open open", "open"},
		{"a - b", "a b"},
		{`"unclosed phrase`, `"unclosed phrase"`},
	} {
		e, err := ParseSearch(c.in)
		if err != nil {
			t.Errorf("ParseSearch(%q): %v", c.in, err)
			continue
		}
		if got := e.String(); got != c.want {
			t.Errorf("ParseSearch(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "   ", "-only", `-"a b"`, "!!!", strings.Repeat("w ", 0) + manyWords(40)} {
		if _, err := ParseSearch(bad); ErrorCode(err) != EINVALID {
			t.Errorf("ParseSearch(%q) = %v, want EINVALID", bad, err)
		}
	}
}

func manyWords(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" w")
		b.WriteByte(byte('a' + i%26))
		b.WriteByte(byte('a' + i/26))
	}
	return b.String()
}

func TestSearchMatchesAndRegexp(t *testing.T) {
	doc := strings.Join(SearchTokens("Open Day at the Universität Wien: 東京タワー tour"), " ")
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"open day", true},
		{`"open day"`, true},
		{`"day open"`, false},
		{"univ*", true},
		{"universitat", true},
		{"univ", false},
		{"open -tour", false},
		{"open -closed", true},
		{"タワー", true},
		{"東京", true},
		{"京", true},
		{"ワ", true},
		{"大阪", false},
		{`"wien 東京"`, true},
	} {
		e, err := ParseSearch(c.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Matches(doc); got != c.want {
			t.Errorf("%q matches = %v, want %v (expr %s, doc %q)", c.q, got, c.want, e, doc)
		}
		// The regular expressions agree with Matches, on the plain text and
		// on MySQL's suffixed form.
		for _, suffix := range []string{"", "__"} {
			text := doc
			if suffix != "" {
				text = strings.ReplaceAll(doc, " ", suffix+" ") + suffix
			}
			ok := true
			for _, term := range e.Terms {
				if regexp.MustCompile(term.Regexp(suffix)).MatchString(text) == term.Exclude {
					ok = false
				}
			}
			if ok != c.want {
				t.Errorf("%q regexp (suffix %q) = %v, want %v", c.q, suffix, ok, c.want)
			}
		}
	}
}

func TestSearchTextFields(t *testing.T) {
	cfg := &Config{Sources: map[string]SourceConfig{
		"conf": {SearchFields: []string{"summary", "tags"}},
		"off":  {Search: new(bool)},
	}}
	item := map[string]any{
		"title": "Title", "url": "https://x.test/a", "summary": "Short", "body": "A much longer body text here",
		"html": "<p>markup markup markup markup markup</p>", "deadline": "2025-01-01 and more words here",
		"link": "https://x.test/long/link/that/is/long", "tags": []any{"alpha", "beta"}, "lang": "en",
	}
	pol, _ := cfg.Policy("")
	if got, want := SearchText(pol, "Title", item), "title a much longer body text here short en"; got != want {
		t.Errorf("default fields: %q, want %q", got, want)
	}
	pol, _ = cfg.Policy("conf")
	if got, want := SearchText(pol, "Title", item), "title short alpha beta"; got != want {
		t.Errorf("configured fields: %q, want %q", got, want)
	}
	pol, _ = cfg.Policy("off")
	if got := SearchText(pol, "Title", item); got != "" {
		t.Errorf("search off: %q, want empty", got)
	}
	if _, err := (&Config{Defaults: SourceConfig{SearchLanguage: "x'; drop"}}).Policy(""); ErrorCode(err) != EINVALID {
		t.Errorf("bad search_language: %v, want EINVALID", err)
	}
}

func TestSnippets(t *testing.T) {
	item := `{"body":"Das Studentenwerk lädt zum Tag der offenen Tür an der Universität Wien ein. Führungen durch die Bibliothek.","title":"Tag der offenen Tür"}`
	page := &SearchPage{Hits: []SearchHit{{Record: &Record{Source: "s", Title: "Tag der offenen Tür", Item: []byte(item)}}}}
	e, _ := ParseSearch("universitat fuhr*")
	AddSnippets(page, e, nil)
	got := SnippetString(page.Hits[0].Snippet, "[", "]")
	if !strings.Contains(got, "[Universität]") || !strings.Contains(got, "[Führungen]") {
		t.Errorf("snippet %q does not mark Universität and Führungen", got)
	}
	page.Hits[0].Record.Item = []byte(`{"title":"東京タワーの夜景","body":"展望台から見る東京の夜"}`)
	page.Hits[0].Record.Title = "東京タワーの夜景"
	e, _ = ParseSearch("夜景")
	AddSnippets(page, e, nil)
	if got := SnippetString(page.Hits[0].Snippet, "[", "]"); got != "東京タワーの[夜景]" {
		t.Errorf("CJK snippet %q", got)
	}
}

func TestSearchCursor(t *testing.T) {
	hit := SearchHit{Record: &Record{ID: 42, LastUpdatedAt: T0}, Score: 1.25}
	for _, o := range []SearchOrder{SearchRelevance, SearchNewest} {
		c := EncodeSearchCursor(hit, o)
		p, err := SearchQuery{Text: "x", Order: o, Cursor: c}.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.After.ID != 42 || (o == SearchRelevance && p.After.Score != 1.25) || (o == SearchNewest && p.After.UpdatedMicros != T0.UnixMicro()) {
			t.Errorf("order %d: cursor decodes to %+v", o, p.After)
		}
		other := SearchRelevance + SearchNewest - o
		if _, err := (SearchQuery{Text: "x", Order: other, Cursor: c}).Plan(); ErrorCode(err) != EINVALID {
			t.Errorf("a cursor of another order: %v, want EINVALID", err)
		}
	}
	if _, err := (SearchQuery{Text: "x", Cursor: "!!"}).Plan(); ErrorCode(err) != EINVALID {
		t.Errorf("bad cursor: %v", err)
	}
}

// TestSearchTokensASCIIFastPath checks that the ASCII path of
// appendSearchText gives what the general tokenizer gives.
func TestSearchTokensASCIIFastPath(t *testing.T) {
	for _, s := range []string{"", "  Hello, World!! ", "a-b_c.d/e", "ABC123 x9 9x", strings.Repeat("long", 30) + " tail", "\t\n tabs\tand\nlines", "under_score"} {
		var fast strings.Builder
		appendASCIITokens(&fast, s)
		if want := strings.Join(SearchTokens(s), " "); fast.String() != want {
			t.Errorf("%q: fast path %q, tokenizer %q", s, fast.String(), want)
		}
	}
}
