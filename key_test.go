package crawlkeeper

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://Example.COM/a/b", "https://example.com/a/b"},
		{"HTTP://example.com:80/x", "http://example.com/x"},
		{"https://example.com:443/x", "https://example.com/x"},
		{"https://example.com:8443/x", "https://example.com:8443/x"},
		{"http://example.com:443/x", "http://example.com:443/x"},
		{"https://example.com/a#frag", "https://example.com/a"},
		{"https://example.com", "https://example.com/"},
		{"https://example.com?q=1", "https://example.com/?q=1"},
		{"  https://example.com/a  ", "https://example.com/a"},
		{"https://example.com/Path/Case", "https://example.com/Path/Case"},
		{"https://example.com/a?b=C#d", "https://example.com/a?b=C"},
		{"https://[::1]:443/a", "https://[::1]/a"},
		{"/relative/path", "/relative/path"},
		{"not a url", "not a url"},
		{"mailto:someone@example.com", "mailto:someone@example.com"},
		{"", ""},
	} {
		if got := NormalizeURL(tc.in); got != tc.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"  padded  ", "padded"},
		{"many   inner\t\tspaces", "many inner spaces"},
		{"line\nbreaks\r\n", "line breaks"},
		{"\u00a0non-breaking\u2003em\u3000ideographic ", "non-breaking em ideographic"},
		{"", ""},
		{"   ", ""},
		{"Ünïcödé  title", "Ünïcödé title"},
	} {
		if got := NormalizeText(tc.in); got != tc.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func decode(t testing.TB, js string) map[string]any {
	t.Helper()
	m, _, err := DecodeItem([]byte(js), Meta{})
	if err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return m
}

func policy(t testing.TB, cfg *Config, source string) *SourcePolicy {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	p, err := cfg.Policy(source)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildKey(t *testing.T) {
	p := policy(t, nil, "s")
	k1, parts := BuildKey(p, decode(t, `{"title":"A  job","url":"https://X.test/a#f","n":1}`))
	k2, _ := BuildKey(p, decode(t, `{"title":" A job ","url":"https://x.test:443/a","n":2}`))
	if k1 != k2 {
		t.Fatalf("equal titles and URLs after normalisation gave keys %s and %s", k1, k2)
	}
	if strings.Join(parts, "|") != "title=a job|url=https://x.test/a" {
		t.Fatalf("key parts = %q", parts)
	}
	if len(k1) != 32 {
		t.Fatalf("key %q: want 32 hex characters", k1)
	}
	k3, _ := BuildKey(p, decode(t, `{"title":"A job","url":"https://x.test/b"}`))
	if k3 == k1 {
		t.Fatal("different URLs gave the same key")
	}
	other := policy(t, nil, "other")
	k4, _ := BuildKey(other, decode(t, `{"title":"A job","url":"https://x.test/a"}`))
	if k4 == k1 {
		t.Fatal("keys must be scoped by source")
	}

	// Missing or blank key fields fall back to a hash of non-volatile fields.
	f1, fp := BuildKey(p, decode(t, `{"title":"","url":"https://x.test/a","price":3,"scraped_at":"x"}`))
	f2, _ := BuildKey(p, decode(t, `{"url":"https://x.test/a","price":3,"title":"","scraped_at":"y"}`))
	if f1 != f2 {
		t.Fatal("fallback key must ignore volatile fields")
	}
	if len(fp) != 1 || !strings.HasPrefix(fp[0], "hash(price,title,url)=") {
		t.Fatalf("fallback key parts = %q", fp)
	}
	f3, _ := BuildKey(p, decode(t, `{"url":"https://x.test/a","price":4,"title":""}`))
	if f3 == f1 {
		t.Fatal("fallback key ignored a content field")
	}

	// Configured key fields.
	cfg := &Config{Sources: map[string]SourceConfig{"s": {Key: []string{"sku"}}}}
	ps := policy(t, cfg, "s")
	s1, sp := BuildKey(ps, decode(t, `{"sku":12345,"title":"x"}`))
	s2, _ := BuildKey(ps, decode(t, `{"sku":12345,"title":"y"}`))
	if s1 != s2 || sp[0] != "sku=12345" {
		t.Fatalf("configured key: %s %s %q", s1, s2, sp)
	}
}

func TestCanonicalJSON(t *testing.T) {
	p := &Preparer{}
	a, err := p.Prepare([]byte(`{"b":1,"a":{"z":[1,2,{"y":"<&>","x":null}],"c":true},"title":"T","url":"https://u.test/"}`), 1, Meta{}, T0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"c":true,"z":[1,2,{"x":null,"y":"<&>"}]},"b":1,"title":"T","url":"https://u.test/"}`
	if string(a.Item) != want {
		t.Fatalf("canonical item\n got %s\nwant %s", a.Item, want)
	}
	b, _ := p.Prepare([]byte(`{"url":"https://u.test/","title":"T","a":{"c":true,"z":[1,2,{"x":null,"y":"<&>"}]},"b":1}`), 1, Meta{}, T0)
	if a.ContentHash != b.ContentHash {
		t.Fatal("key order changed the content hash")
	}
	c, _ := p.Prepare([]byte(`{"url":"https://u.test/","title":"T","a":{"c":true,"z":[2,1,{"x":null,"y":"<&>"}]},"b":1}`), 1, Meta{}, T0)
	if a.ContentHash == c.ContentHash {
		t.Fatal("array order must change the content hash")
	}
}

func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\n\r\t", "ünï 日本 \u2028\u2029", "emoji 🎉", "<script>&"} {
		var b strings.Builder
		writeString(&b, s)
		var back string
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
			t.Fatalf("writeString(%q) = %s is not valid JSON: %v", s, b.String(), err)
		}
		if back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	}
}

func FuzzBuildKey(f *testing.F) {
	for _, s := range []string{`{"title":"a","url":"https://x/"}`, `{"x":1}`, `{"title":"","url":null,"deep":{"a":[1,{"b":2}]}}`} {
		f.Add(s)
	}
	p := policy(f, nil, "fuzz")
	f.Fuzz(func(t *testing.T, js string) {
		m, _, err := DecodeItem([]byte(js), Meta{})
		if err != nil {
			return
		}
		k1, parts := BuildKey(p, m)
		k2, _ := BuildKey(p, m)
		if k1 != k2 || len(k1) != 32 || len(parts) == 0 {
			t.Fatalf("key %q (again %q) parts %q", k1, k2, parts)
		}
		prep, err := (&Preparer{}).Prepare([]byte(js), 1, Meta{Source: "fuzz"}, T0)
		if err != nil {
			return
		}
		if !json.Valid(prep.Item) {
			t.Fatalf("canonical item is not valid JSON: %s", prep.Item)
		}
		// The stored item rebuilds the same key: what rekey relies on.
		rk, rparts, err := RecomputeKey(p, prep.Item)
		if err != nil || rk != prep.Key || strings.Join(rparts, "\x00") != strings.Join(prep.KeyParts, "\x00") {
			t.Fatalf("RecomputeKey(%s) = %s %q %v, ingest keyed it %s %q", prep.Item, rk, rparts, err, prep.Key, prep.KeyParts)
		}
	})
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://Example.com:443/a#b", "http://[::1]:80/", "%zz", "https://a/b?c=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeURL(s)
		if NormalizeURL(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, NormalizeURL(n))
		}
		if utf8.ValidString(s) && !utf8.ValidString(n) {
			t.Fatalf("valid UTF-8 %q became invalid %q", s, n)
		}
	})
}
