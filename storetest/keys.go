package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
)

// keyPair is two deliveries and whether they are one record.
type keyPair struct {
	name       string
	source     string
	a, b       [2]string // title, url
	sameRecord bool
}

// keyPairs are the key rules' pairs (docs/KEYS.md), one or two per rule;
// the "site" source has per-source settings (keyPairsConfig).
var keyPairs = []keyPair{
	{"UTM", "jobs", [2]string{"Open Day", "https://uni.example/events/open-day?utm_source=twitter&utm_medium=social"}, [2]string{"Open Day", "https://uni.example/events/open-day"}, true},
	{"Fbclid", "jobs", [2]string{"Fair", "https://uni.example/fair?fbclid=IwAR0"}, [2]string{"Fair", "https://uni.example/fair"}, true},
	{"Gclid", "jobs", [2]string{"Talk", "https://uni.example/talk?id=3&gclid=EAIa"}, [2]string{"Talk", "https://uni.example/talk?id=3"}, true},
	{"TrailingSlash", "jobs", [2]string{"Tour", "https://uni.example/events/tour/"}, [2]string{"Tour", "https://uni.example/events/tour"}, true},
	{"ParamOrder", "jobs", [2]string{"List", "https://jobs.example/list?page=2&sort=new"}, [2]string{"List", "https://jobs.example/list?sort=new&page=2"}, true},
	{"TitleCase", "jobs", [2]string{"Data Engineer", "https://jobs.example/1"}, [2]string{"DATA ENGINEER", "https://jobs.example/1"}, true},
	{"TitleWidth", "jobs", [2]string{"Web Developer", "https://jobs.example/2"}, [2]string{"Ｗｅｂ　Ｄｅｖｅｌｏｐｅｒ", "https://jobs.example/2"}, true},
	{"TitleWhitespace", "jobs", [2]string{"Nurse", "https://jobs.example/3"}, [2]string{"  Nurse\n", "https://jobs.example/3"}, true},
	{"ID", "jobs", [2]string{"View", "https://jobs.example/view?id=1"}, [2]string{"View", "https://jobs.example/view?id=2"}, false},
	{"Page", "jobs", [2]string{"Page", "https://jobs.example/p?page=1"}, [2]string{"Page", "https://jobs.example/p?page=2"}, false},
	{"Language", "jobs", [2]string{"Lang", "https://jobs.example/l?lang=de"}, [2]string{"Lang", "https://jobs.example/l?lang=en"}, false},
	{"Path", "jobs", [2]string{"Path", "https://jobs.example/a/1"}, [2]string{"Path", "https://jobs.example/a/2"}, false},
	{"Host", "jobs", [2]string{"Host", "https://a.example/x"}, [2]string{"Host", "https://b.example/x"}, false},
	{"WWW", "jobs", [2]string{"WWW", "https://www.c.example/x"}, [2]string{"WWW", "https://c.example/x"}, false},
	{"Scheme", "jobs", [2]string{"Campus tour", "http://uni.example/events/campus-tour"}, [2]string{"Campus tour", "https://uni.example/events/campus-tour"}, true},
	{"DirectoryIndex", "jobs", [2]string{"News", "https://uni.example/news/index.html"}, [2]string{"News", "https://uni.example/news/"}, true},
	{"FrontController", "jobs", [2]string{"Post", "https://blog.example/index.php?p=12"}, [2]string{"Post", "https://blog.example/?p=12"}, true},
	{"QueryAmpEntity", "jobs", [2]string{"Search", "https://jobs.example/s?q=nurse&amp;page=2"}, [2]string{"Search", "https://jobs.example/s?q=nurse&page=2"}, true},
	{"TweetShare", "jobs", [2]string{"Talk", "https://uni.example/talk?ref_src=twsrc%5Etfw&ref_url=https%3A%2F%2Fnews.example%2F"}, [2]string{"Talk", "https://uni.example/talk"}, true},
	{"LinkedInJob", "jobs", [2]string{"Nurse", "https://www.linkedin.com/jobs/view/3912345678/?refId=a%3D%3D&trackingId=b%3D%3D&trk=public_jobs_topcard-title"}, [2]string{"Nurse", "https://www.linkedin.com/jobs/view/3912345678"}, true},
	{"TitleEntity", "jobs", [2]string{"Q&amp;A with the Dean", "https://uni.example/qa"}, [2]string{"Q&A with the Dean", "https://uni.example/qa"}, true},
	{"TitleNumericEntity", "jobs", [2]string{"What&#8217;s new", "https://uni.example/new"}, [2]string{"What's new", "https://uni.example/new"}, true},
	{"WordPressSearch", "jobs", [2]string{"Search", "https://blog.example/?s=nurse"}, [2]string{"Search", "https://blog.example/?s=teacher"}, false},
	{"OtherPageInDirectory", "jobs", [2]string{"Press", "https://uni.example/press/index.html"}, [2]string{"Press", "https://uni.example/press/archive.html"}, false},
	{"SiteDropParams", "site", [2]string{"Item", "https://shop.example/i/1?sid=77&ref=home"}, [2]string{"Item", "https://shop.example/i/1"}, true},
	{"SiteKeepsSlash", "site", [2]string{"Dir", "https://shop.example/d/"}, [2]string{"Dir", "https://shop.example/d"}, false},
	{"SiteTitleCase", "site", [2]string{"Shoes", "https://shop.example/s"}, [2]string{"SHOES", "https://shop.example/s"}, false},
	{"SiteTitleEntityDecoded", "site", [2]string{"Shoes &amp; Boots", "https://shop.example/s"}, [2]string{"Shoes & Boots", "https://shop.example/s"}, true},
	{"SiteKeepsScheme", "site", [2]string{"Item", "http://shop.example/i/2"}, [2]string{"Item", "https://shop.example/i/2"}, false},
	{"SiteKeepsIndex", "site", [2]string{"Dir", "https://shop.example/e/index.html"}, [2]string{"Dir", "https://shop.example/e/"}, false},
	{"MarkupKeepsEntities", "markup", [2]string{"The &amp;amp; entity", "https://html.example/amp"}, [2]string{"The &amp; entity", "https://html.example/amp"}, false},
}

const keyPairsConfig = `
sources:
  site:
    key_rules:
      url: {drop_params: [sid, ref], keep_trailing_slash: true, keep_scheme: true, keep_directory_index: true}
      title: {fold: false}
  markup:
    key_rules:
      title: {keep_entities: true}
`

// testKeyPairs ingests the key rules' pairs through the store and counts
// the records.
func testKeyPairs(t *testing.T, open RecordOpener) {
	e := NewEnv(t, open)
	cfg, err := config.Parse([]byte(keyPairsConfig))
	if err != nil {
		t.Fatal(err)
	}
	g := &crawlkeeper.Ingester{Store: e.Store, Config: cfg, Now: func() time.Time { return T0 }}
	ctx := context.Background()
	want := map[string]int{}
	var lines []string
	for _, p := range keyPairs {
		for _, d := range [][2]string{p.a, p.b} {
			b, _ := json.Marshal(map[string]string{"_source": p.source, "title": d[0], "url": d[1], "pair": p.name})
			lines = append(lines, string(b))
		}
		if p.sameRecord {
			want[p.name] = 1
		} else {
			want[p.name] = 2
		}
	}
	sum, err := g.Ingest(ctx, strings.NewReader(strings.Join(lines, "\n")), crawlkeeper.Meta{})
	if err != nil || sum.Rejected > 0 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
	got := map[string]int{}
	for _, source := range []string{"jobs", "site", "markup"} {
		page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Source: source, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			var it struct{ Pair string }
			if err := json.Unmarshal(r.Item, &it); err != nil {
				t.Fatal(err)
			}
			got[it.Pair]++
			if !strings.Contains(r.URL, "://") || len(r.KeyParts) != 2 || !strings.HasPrefix(r.KeyParts[1], "url=") {
				t.Errorf("record %d: url %q key_parts %q", r.ID, r.URL, r.KeyParts)
			}
		}
	}
	for _, p := range keyPairs {
		if got[p.name] != want[p.name] {
			t.Errorf("%s (%s): %d records, want %d", p.name, p.source, got[p.name], want[p.name])
		}
	}
	// The stored item keeps the URL the crawler sent; the key parts show
	// the canonical form.
	r := findRecord(t, e, "UTM", "utm_source")
	if !strings.Contains(string(r.Item), "utm_source=twitter") || r.KeyParts[1] != "url=https://uni.example/events/open-day" {
		t.Errorf("UTM record: item %s, key_parts %q", r.Item, r.KeyParts)
	}
	e.MustCheck()
}

// findRecord returns the record of a pair whose stored item contains s.
func findRecord(t *testing.T, e *Env[crawlkeeper.RecordStore], pair, s string) *crawlkeeper.Record {
	t.Helper()
	page, err := e.Store.List(context.Background(), crawlkeeper.RecordQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Records {
		if strings.Contains(string(r.Item), `"pair":"`+pair+`"`) && strings.Contains(string(r.Item), s) {
			return r
		}
	}
	t.Fatalf("no record of pair %s with %q", pair, s)
	return nil
}

// RunKeyRules runs the conformance tests of the key-rules guard on a store
// with the records and state roles: a source's first ingest records the
// key-rules fingerprint in the state, and other or unrecorded rules are
// reported once.
func RunKeyRules(t *testing.T, open func(tb testing.TB) crawlkeeper.KeyRulesBackend) {
	e := NewEnv(t, open)
	ctx := context.Background()
	var warnings []string
	warn := func(source, msg string) { warnings = append(warnings, source+": "+msg) }
	ingest := func(cfg *crawlkeeper.Config, source string, n int) {
		t.Helper()
		guard := &crawlkeeper.KeyRulesGuard{Store: e.Store, Config: cfg, Warn: warn}
		g := &crawlkeeper.Ingester{Store: e.Store, Config: cfg, KeyRules: guard, Now: func() time.Time { return T0 }}
		// Two batches: the guard checks a source once per process.
		for batch := 0; batch < 2; batch++ {
			var lines []string
			for i := 0; i < n; i++ {
				lines = append(lines, fmt.Sprintf(`{"title":"T%d","url":"https://g.example/%d"}`, i, i))
			}
			if _, err := g.Ingest(ctx, strings.NewReader(strings.Join(lines, "\n")), crawlkeeper.Meta{Source: source}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A new source: the fingerprint is recorded, nothing is said.
	cfg := &crawlkeeper.Config{}
	ingest(cfg, "fresh", 2)
	want, _ := crawlkeeper.KeyRulesFingerprint(cfg, "fresh")
	if have, err := crawlkeeper.StoredKeyRules(ctx, e.Store, "fresh"); err != nil || have != want {
		t.Fatalf("stored fingerprint %q %v, want %q", have, err, want)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings for a new source: %q", warnings)
	}

	// The source's rules change: one warning that names rekey, and the
	// store keeps the old fingerprint until rekey replaces it.
	yes := true
	changed := &crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"fresh": {KeyRules: crawlkeeper.KeyRulesConfig{URL: crawlkeeper.URLKeyRules{KeepTrailingSlash: &yes}}}}}
	ingest(changed, "fresh", 2)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "crawlkeeper rekey --source fresh") || !strings.Contains(warnings[0], want) {
		t.Fatalf("warnings after a rule change: %q", warnings)
	}
	if have, _ := crawlkeeper.StoredKeyRules(ctx, e.Store, "fresh"); have != want {
		t.Fatalf("the stored fingerprint moved to %q before a rekey", have)
	}

	// Records written without a recorded fingerprint (a store from before
	// key rules were recorded) under other rules are reported too.
	warnings = nil
	e.Now = T0
	asSent, err := config.Parse([]byte("defaults:\n  key_rules:\n    url: {canonical: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := (&crawlkeeper.Preparer{Config: asSent}).Prepare([]byte(`{"_source":"legacy","title":"Old","url":"https://g.example/old/?utm_source=x"}`), 1, crawlkeeper.Meta{}, T0)
	if err != nil {
		t.Fatal(err)
	}
	// Records from before fingerprints whose keys the current rules build
	// again were built under them: their fingerprint is recorded, silently.
	same := e.Prepare(`{"_source":"compatible","title":"Same","url":"https://g.example/same"}`)
	if _, err := e.Store.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{old, same}, Now: T0}); err != nil {
		t.Fatal(err)
	}
	guard := &crawlkeeper.KeyRulesGuard{Store: e.Store, Config: cfg, Warn: warn}
	if err := guard.CheckStore(ctx); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "legacy: ") || !strings.Contains(warnings[0], "rekey") {
		t.Fatalf("warnings for records without a fingerprint: %q", warnings)
	}
	if have, _ := crawlkeeper.StoredKeyRules(ctx, e.Store, "legacy"); have != "" {
		t.Fatalf("a fingerprint %q was recorded for keys built under unknown rules", have)
	}
	if fp, _ := crawlkeeper.KeyRulesFingerprint(cfg, "compatible"); mustStored(t, e.Store, "compatible") != fp {
		t.Fatalf("records keyed under the current rules: stored fingerprint %q, want %q", mustStored(t, e.Store, "compatible"), fp)
	}

	// The empty source name is a source of its own: its first ingest into
	// a store holding other sources' records says nothing.
	warnings = nil
	ingest(cfg, "", 1)
	if len(warnings) != 0 {
		t.Fatalf("warnings for the first records of the empty source: %q", warnings)
	}
	if fp, _ := crawlkeeper.KeyRulesFingerprint(cfg, ""); mustStored(t, e.Store, "") != fp {
		t.Fatalf("the empty source's fingerprint is %q, want %q", mustStored(t, e.Store, ""), fp)
	}

	// A running process checks again: when another process records other
	// rules (a rekey after a rule change), it warns within Every, not
	// before.
	warnings = nil
	now := T0
	running := &crawlkeeper.KeyRulesGuard{Store: e.Store, Config: cfg, Warn: warn, Every: time.Minute, Now: func() time.Time { return now }}
	running.Check(ctx, "compatible")
	fpChanged := "k2-0123456789abcdef" // another process's rules
	if err := crawlkeeper.RecordKeyRules(ctx, e.Store, "compatible", fpChanged); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	running.Check(ctx, "compatible")
	if len(warnings) != 0 {
		t.Fatalf("warned before Every passed: %q", warnings)
	}
	now = now.Add(31 * time.Second)
	running.Check(ctx, "compatible")
	if len(warnings) != 1 || !strings.Contains(warnings[0], fpChanged) {
		t.Fatalf("a running process did not notice other recorded rules: %q", warnings)
	}
	if fp, _ := crawlkeeper.KeyRulesFingerprint(cfg, "compatible"); crawlkeeper.RecordKeyRules(ctx, e.Store, "compatible", fp) != nil {
		t.Fatal("record the fingerprint back")
	}

	// Once rekey records the current fingerprint, nothing is said.
	warnings = nil
	fp, _ := crawlkeeper.KeyRulesFingerprint(cfg, "legacy")
	if err := crawlkeeper.RecordKeyRules(ctx, e.Store, "legacy", fp); err != nil {
		t.Fatal(err)
	}
	if err := (&crawlkeeper.KeyRulesGuard{Store: e.Store, Config: cfg, Warn: warn}).CheckStore(ctx); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings after the fingerprint was recorded: %q", warnings)
	}
}

func mustStored(t *testing.T, st crawlkeeper.StateStore, source string) string {
	t.Helper()
	fp, err := crawlkeeper.StoredKeyRules(context.Background(), st, source)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}
