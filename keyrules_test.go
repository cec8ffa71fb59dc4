package crawlkeeper

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// keyOfItem builds the key of a {title, url} item under a source's policy.
func keyOfItem(t *testing.T, p *SourcePolicy, title, url string) (string, []string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"title": title, "url": url})
	return BuildKey(p, decode(t, string(b)))
}

// TestKeyRulesPairs checks each key rule with a pair of deliveries that
// must be one record and a pair that must stay two, under the defaults.
func TestKeyRulesPairs(t *testing.T) {
	p := policy(t, nil, "jobs")
	type delivery struct{ title, url string }
	for _, tc := range []struct {
		rule       string
		a, b       delivery
		sameRecord bool
	}{
		{"TrackingUTM", delivery{"Open Day", "https://uni.example/events/open-day?utm_source=twitter&utm_medium=social"}, delivery{"Open Day", "https://uni.example/events/open-day"}, true},
		{"TrackingFbclid", delivery{"Open Day", "https://uni.example/events/open-day?fbclid=IwAR0abc"}, delivery{"Open Day", "https://uni.example/events/open-day"}, true},
		{"TrackingGclid", delivery{"Open Day", "https://uni.example/e?id=4&gclid=EAIaIQ"}, delivery{"Open Day", "https://uni.example/e?id=4"}, true},
		{"TrailingSlash", delivery{"Open Day", "https://uni.example/events/open-day/"}, delivery{"Open Day", "https://uni.example/events/open-day"}, true},
		{"ParamOrder", delivery{"Jobs", "https://jobs.example/list?page=2&sort=new"}, delivery{"Jobs", "https://jobs.example/list?sort=new&page=2"}, true},
		{"TitleCase", delivery{"Data Engineer", "https://jobs.example/1"}, delivery{"DATA ENGINEER", "https://jobs.example/1"}, true},
		{"TitleWidth", delivery{"Data Engineer", "https://jobs.example/1"}, delivery{"Ｄａｔａ Ｅｎｇｉｎｅｅｒ", "https://jobs.example/1"}, true},
		{"TitleWhitespace", delivery{"Data Engineer", "https://jobs.example/1"}, delivery{" Data\u00a0\n Engineer ", "https://jobs.example/1"}, true},
		{"TitleSharpS", delivery{"Straßenbau", "https://jobs.example/1"}, delivery{"STRASSENBAU", "https://jobs.example/1"}, true},
		{"HostCaseAndPort", delivery{"Jobs", "HTTPS://Jobs.Example:443/1"}, delivery{"Jobs", "https://jobs.example/1"}, true},
		{"Fragment", delivery{"Jobs", "https://jobs.example/1#apply"}, delivery{"Jobs", "https://jobs.example/1"}, true},
		{"MeaningfulID", delivery{"Jobs", "https://jobs.example/view?id=1"}, delivery{"Jobs", "https://jobs.example/view?id=2"}, false},
		{"MeaningfulPage", delivery{"Jobs", "https://jobs.example/list?page=1"}, delivery{"Jobs", "https://jobs.example/list?page=2"}, false},
		{"MeaningfulLanguage", delivery{"Jobs", "https://jobs.example/1?lang=de"}, delivery{"Jobs", "https://jobs.example/1?lang=en"}, false},
		{"MeaningfulQuery", delivery{"Search", "https://jobs.example/s?q=go"}, delivery{"Search", "https://jobs.example/s?q=rust"}, false},
		{"Path", delivery{"Jobs", "https://jobs.example/1"}, delivery{"Jobs", "https://jobs.example/2"}, false},
		{"Host", delivery{"Jobs", "https://a.jobs.example/1"}, delivery{"Jobs", "https://b.jobs.example/1"}, false},
		{"WWWIsAnotherHost", delivery{"Jobs", "https://www.jobs.example/1"}, delivery{"Jobs", "https://jobs.example/1"}, false},
		{"HashRoute", delivery{"Jobs", "https://app.example/#/jobs/1"}, delivery{"Jobs", "https://app.example/#/jobs/2"}, false},
		{"TitleWords", delivery{"Data Engineer", "https://jobs.example/1"}, delivery{"Senior Data Engineer", "https://jobs.example/1"}, false},
		{"TitleAccents", delivery{"Resume", "https://jobs.example/1"}, delivery{"Résumé", "https://jobs.example/1"}, false},
		{"Scheme", delivery{"Jobs", "http://jobs.example/1"}, delivery{"Jobs", "https://jobs.example/1"}, true},
		{"DirectoryIndex", delivery{"News", "https://news.example/local/index.html"}, delivery{"News", "https://news.example/local/"}, true},
		{"QueryAmpEntity", delivery{"Jobs", "https://jobs.example/list?page=2&amp;sort=new"}, delivery{"Jobs", "https://jobs.example/list?sort=new&page=2"}, true},
		{"TweetShare", delivery{"Jobs", "https://jobs.example/1?ref_src=twsrc%5Etfw"}, delivery{"Jobs", "https://jobs.example/1"}, true},
		{"PlatformShare", delivery{"Jobs", "https://www.linkedin.com/jobs/view/39/?trk=public_jobs&refId=x"}, delivery{"Jobs", "https://www.linkedin.com/jobs/view/39"}, true},
		{"TitleEntities", delivery{"Q&amp;A: What&#8217;s next", "https://news.example/qa"}, delivery{"Q&A: What’s next", "https://news.example/qa"}, true},
		{"TitleApostrophe", delivery{"It’s here", "https://news.example/it"}, delivery{"It's here", "https://news.example/it"}, true},
		{"SearchParamOffPlatform", delivery{"Search", "https://blog.example/?s=go"}, delivery{"Search", "https://blog.example/?s=rust"}, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			ka, pa := keyOfItem(t, p, tc.a.title, tc.a.url)
			kb, pb := keyOfItem(t, p, tc.b.title, tc.b.url)
			if (ka == kb) != tc.sameRecord {
				t.Fatalf("same record = %v, want %v\n %q\n %q", ka == kb, tc.sameRecord, pa, pb)
			}
		})
	}
}

func TestKeyRulesPerSource(t *testing.T) {
	yes, no := true, false
	cfg := &Config{
		Defaults: SourceConfig{KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"ref"}}}},
		Sources: map[string]SourceConfig{
			"slash":  {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepTrailingSlash: &yes}}},
			"raw":    {KeyRules: KeyRulesConfig{URL: URLKeyRules{Canonical: &no}, Title: TitleKeyRules{Fold: &no}}},
			"shop":   {KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"sid", "pf_rd_*"}, FoldWWW: &yes}}},
			"exempt": {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepParams: []string{"utm_content"}}}},
			"plain":  {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepScheme: &yes, KeepDirectoryIndex: &yes}, Title: TitleKeyRules{KeepEntities: &yes}}},
		},
	}
	same := func(t *testing.T, source, ta, ua, tb, ub string, want bool) {
		t.Helper()
		p := policy(t, cfg, source)
		ka, pa := keyOfItem(t, p, ta, ua)
		kb, pb := keyOfItem(t, p, tb, ub)
		if (ka == kb) != want {
			t.Fatalf("source %s: same record = %v, want %v\n %q\n %q", source, ka == kb, want, pa, pb)
		}
	}
	t.Run("DefaultsDropParams", func(t *testing.T) {
		same(t, "any", "A", "https://x.example/a?ref=home", "A", "https://x.example/a", true)
	})
	t.Run("SourceReplacesDefaultsList", func(t *testing.T) {
		same(t, "shop", "A", "https://x.example/a?ref=home", "A", "https://x.example/a", false)
		same(t, "shop", "A", "https://x.example/a?sid=9&pf_rd_p=3", "A", "https://x.example/a", true)
	})
	t.Run("FoldWWW", func(t *testing.T) {
		same(t, "shop", "A", "https://www.x.example/a", "A", "https://x.example/a", true)
	})
	t.Run("KeepTrailingSlash", func(t *testing.T) {
		same(t, "slash", "A", "https://x.example/a/", "A", "https://x.example/a", false)
		same(t, "slash", "A", "https://x.example/a/?utm_source=x", "A", "https://x.example/a/", true)
	})
	t.Run("CanonicalOff", func(t *testing.T) {
		same(t, "raw", "A", "https://x.example/a?utm_source=x", "A", "https://x.example/a", false)
		same(t, "raw", "A", "https://x.example/a", "a", "https://x.example/a", false)
		same(t, "raw", "A  b", " https://x.example/a ", "A b", "https://x.example/a", true)
	})
	t.Run("KeepParams", func(t *testing.T) {
		same(t, "exempt", "A", "https://x.example/a?utm_content=v2", "A", "https://x.example/a", false)
		same(t, "exempt", "A", "https://x.example/a?utm_source=x", "A", "https://x.example/a", true)
	})
	t.Run("KeepScheme", func(t *testing.T) {
		same(t, "plain", "A", "http://x.example/a", "A", "https://x.example/a", false)
		same(t, "any", "A", "http://x.example/a", "A", "https://x.example/a", true)
	})
	t.Run("KeepDirectoryIndex", func(t *testing.T) {
		same(t, "plain", "A", "https://x.example/a/index.html", "A", "https://x.example/a/", false)
	})
	t.Run("KeepEntities", func(t *testing.T) {
		same(t, "plain", "Q&amp;A", "https://x.example/a", "Q&A", "https://x.example/a", false)
		same(t, "plain", "Q&A", "https://x.example/a", "q&a", "https://x.example/a", true)
	})
	t.Run("OtherTextFieldsKeepCase", func(t *testing.T) {
		c := &Config{Sources: map[string]SourceConfig{"s": {Key: []string{"sku"}}}}
		p := policy(t, c, "s")
		k1, _ := BuildKey(p, decode(t, `{"sku":"AB-1"}`))
		k2, _ := BuildKey(p, decode(t, `{"sku":"ab-1"}`))
		if k1 == k2 {
			t.Fatal("a non-title key field was case-folded")
		}
	})
	t.Run("BadConfig", func(t *testing.T) {
		for _, sc := range []SourceConfig{
			{KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"a*b"}}}},
			{KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{""}}}},
			{KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"x"}, KeepParams: []string{"x"}}}},
		} {
			c := &Config{Sources: map[string]SourceConfig{"bad": sc}}
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), `sources["bad"]: key_rules.url`) || ErrorCode(err) != EINVALID {
				t.Errorf("Validate(%+v) = %v", sc.KeyRules, err)
			}
		}
	})
}

func TestKeyRulesFingerprint(t *testing.T) {
	yes := true
	base, err := KeyRulesFingerprint(nil, "s")
	if err != nil || !strings.HasPrefix(base, fmt.Sprintf("k%d-", KeyRulesVersion)) {
		t.Fatalf("fingerprint %q %v", base, err)
	}
	if again, _ := KeyRulesFingerprint(&Config{}, "s"); again != base {
		t.Fatalf("fingerprint not stable: %s %s", base, again)
	}
	if other, _ := KeyRulesFingerprint(&Config{}, "other"); other != base {
		t.Fatal("the fingerprint depends on the rules, not on the source's name")
	}
	// Settings that change keys change the fingerprint, and settings that
	// do not leave it alone.
	for name, sc := range map[string]SourceConfig{
		"Key":        {Key: []string{"url"}},
		"Volatile":   {Volatile: []string{"x"}},
		"DropParams": {KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"ref"}}}},
		"KeepParams": {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepParams: []string{"ga_id"}}}},
		"Slash":      {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepTrailingSlash: &yes}}},
		"WWW":        {KeyRules: KeyRulesConfig{URL: URLKeyRules{FoldWWW: &yes}}},
		"Title":      {KeyRules: KeyRulesConfig{Title: TitleKeyRules{Fold: new(bool)}}},
		"Canonical":  {KeyRules: KeyRulesConfig{URL: URLKeyRules{Canonical: new(bool)}}},
		"Scheme":     {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepScheme: &yes}}},
		"Index":      {KeyRules: KeyRulesConfig{URL: URLKeyRules{KeepDirectoryIndex: &yes}}},
		"Entities":   {KeyRules: KeyRulesConfig{Title: TitleKeyRules{KeepEntities: &yes}}},
	} {
		fp, err := KeyRulesFingerprint(&Config{Sources: map[string]SourceConfig{"s": sc}}, "s")
		if err != nil || fp == base {
			t.Errorf("%s: fingerprint %s (base %s) %v", name, fp, base, err)
		}
	}
	for name, sc := range map[string]SourceConfig{
		"History":   {HistoryLimit: 3},
		"TimeZone":  {TimeZone: "Asia/Tokyo"},
		"SameRules": {KeyRules: KeyRulesConfig{URL: URLKeyRules{Canonical: &yes}}},
	} {
		if fp, _ := KeyRulesFingerprint(&Config{Sources: map[string]SourceConfig{"s": sc}}, "s"); fp != base {
			t.Errorf("%s changed the fingerprint", name)
		}
	}
	a, _ := KeyRulesFingerprint(&Config{Sources: map[string]SourceConfig{"s": {KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"b", "A"}}}}}}, "s")
	b, _ := KeyRulesFingerprint(&Config{Sources: map[string]SourceConfig{"s": {KeyRules: KeyRulesConfig{URL: URLKeyRules{DropParams: []string{"a", "b"}}}}}}, "s")
	if a != b {
		t.Error("the order and case of drop_params changed the fingerprint")
	}
}

func TestRecomputeKey(t *testing.T) {
	cfg := &Config{}
	p := policy(t, cfg, "jobs")
	prep, err := (&Preparer{Config: cfg}).Prepare([]byte(`{"_source":"jobs","title":"Data  ENGINEER","url":"https://Jobs.example/1/?utm_source=x","n":1.50}`), 1, Meta{}, T0)
	if err != nil {
		t.Fatal(err)
	}
	key, parts, err := RecomputeKey(p, prep.Item)
	if err != nil || key != prep.Key || strings.Join(parts, "|") != "title=data engineer|url=https://jobs.example/1" {
		t.Fatalf("RecomputeKey = %s %q %v, ingest: %s %q", key, parts, err, prep.Key, prep.KeyParts)
	}
	// Under other rules the same stored item gets another key: what rekey
	// looks for.
	no := false
	raw := policy(t, &Config{Sources: map[string]SourceConfig{"jobs": {KeyRules: KeyRulesConfig{URL: URLKeyRules{Canonical: &no}}}}}, "jobs")
	if k2, _, _ := RecomputeKey(raw, prep.Item); k2 == key {
		t.Fatal("other rules gave the same key")
	}
	if _, _, err := RecomputeKey(p, json.RawMessage(`[1]`)); ErrorCode(err) != EINVALID {
		t.Fatalf("not an object: %v", err)
	}
}

func BenchmarkBuildKey(b *testing.B) {
	p := policy(b, nil, "bench")
	for _, bc := range []struct{ name, js string }{
		{"Plain", `{"title":"Acme Data Engineer #123456","url":"https://jobs.example/posting/123456","city":"Berlin"}`},
		{"Tracking", `{"title":"Acme Data Engineer #123456","url":"https://Jobs.Example/posting/123456/?utm_source=twitter&utm_medium=social&page=2#apply","city":"Berlin"}`},
		{"Unicode", `{"title":"Ｓｅｎｉｏｒ Data Engineer – München","url":"https://bücher.example/straße?q=köln","city":"Berlin"}`},
	} {
		item := decode(b, bc.js)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				BuildKey(p, item)
			}
		})
	}
}
