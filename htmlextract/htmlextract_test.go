package htmlextract_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/htmlextract"
)

const page = `<html><body>
<h1 class="title">  Senior   Go
  Engineer </h1>
<div class="meta"><span class="company">Acme</span>, <span class="city">Berlin</span></div>
<a class="apply" href="https://jobs.test/apply/1">Apply</a>
<ul><li>first</li><li>second</li></ul>
</body></html>`

func record(source string, item map[string]any) *crawlkeeper.Record {
	b, _ := json.Marshal(item)
	return &crawlkeeper.Record{ID: 1, Source: source, Item: b, Version: 1}
}

func TestExtract(t *testing.T) {
	cfg := &crawlkeeper.Config{
		Defaults: crawlkeeper.SourceConfig{Extract: map[string]string{"heading": "h1"}},
		Sources: map[string]crawlkeeper.SourceConfig{
			"jobs": {HTMLField: "page", Extract: map[string]string{
				"title":   "h1.title",
				"company": ".meta .company",
				"apply":   "a.apply@href",
				"first":   "ul li, h6",
				"missing": ".nothing",
				"noattr":  "h1@data-x",
			}},
		},
	}
	x, err := htmlextract.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := map[string]any{}
	if err := x.Process(context.Background(), record("jobs", map[string]any{"page": page}), d); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d["extract"])
	want := `{"apply":"https://jobs.test/apply/1","company":"Acme","first":"first","missing":null,"noattr":null,"title":"Senior Go Engineer"}`
	if string(got) != want {
		t.Fatalf("extract = %s\nwant      %s", got, want)
	}

	// Defaults apply to other sources, on the default field "html".
	d = map[string]any{}
	x.Process(context.Background(), record("other", map[string]any{"html": page}), d)
	if got, _ := json.Marshal(d["extract"]); string(got) != `{"heading":"Senior Go Engineer"}` {
		t.Fatalf("default extract = %s", got)
	}
	// No HTML field: nothing extracted, no failure.
	d = map[string]any{}
	if err := x.Process(context.Background(), record("other", map[string]any{"body": "x"}), d); err != nil || d["extract"] != nil {
		t.Fatalf("without html: %v %v", d, err)
	}

	// Changing a selector changes the version, so records become due.
	cfg2 := &crawlkeeper.Config{Defaults: crawlkeeper.SourceConfig{Extract: map[string]string{"heading": "h2"}}}
	x2, _ := htmlextract.New(cfg2)
	if x2.Version() == x.Version() {
		t.Fatal("a selector change must change the processor version")
	}
	x3, _ := htmlextract.New(&crawlkeeper.Config{Defaults: crawlkeeper.SourceConfig{Extract: map[string]string{"heading": "h2"}}})
	if x3.Version() != x2.Version() {
		t.Fatal("the same selectors must give the same version")
	}
}

func TestExtractRejectsBadSelectors(t *testing.T) {
	for _, sel := range []string{"h1[", "a@", "::nope("} {
		_, err := htmlextract.New(&crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"s": {Extract: map[string]string{"f": sel}}}})
		if err == nil || !strings.Contains(err.Error(), `sources["s"]: extract.f`) {
			t.Errorf("selector %q: error %v, want one naming the source and field", sel, err)
		}
	}
}
