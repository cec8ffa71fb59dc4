package browsertest_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/demo"
)

// TestBrowserSearchDemoRecords runs the demo's simulated crawl for half a
// day into a server, then searches its records from the Records page's
// search box in Chromium, in English, German and Japanese: the page shows
// the same records as GET /api/v1/search, in the same order, each with its
// matched words marked (in a snippet of its text, or in the title when the
// title is what matched), and pages on with the cursor.
func TestBrowserSearchDemoRecords(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	sim := demo.New(func(ctx context.Context, items []map[string]any, meta crawlkeeper.Meta) error {
		metas := make([]crawlkeeper.Meta, len(items))
		for i := range metas {
			metas[i] = meta
		}
		_, err := e.api.Ingester.IngestItems(ctx, items, metas)
		return err
	}, e.mon, e.now(), 1)
	for end := e.now().Add(12 * time.Hour); e.now().Before(end); e.advance(15 * time.Minute) {
		if err := sim.Step(ctx, e.now()); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, e.srv.URL)
	rows := func() []string { return b.texts("#search-results tbody tr td:first-child") }
	apiIDs := func(page crawlkeeper.SearchPage) []string {
		var out []string
		for _, h := range page.Hits {
			out = append(out, strconv.FormatInt(h.Record.ID, 10))
		}
		return out
	}
	for _, c := range []struct{ query, mark string }{
		{"engineer", "engineer"},
		{"reliability engineer", "reliability"},
		{"tür", "tur"},
		{"研究科", "研究科"},
	} {
		t.Run(c.query, func(t *testing.T) {
			b.t = t
			b.open("/records")
			b.load("search "+c.query,
				chromedp.SendKeys(chromedp.CSS(`#search-box`), c.query),
				chromedp.Submit(chromedp.CSS(`#search-box`)))
			var page crawlkeeper.SearchPage
			e.call("GET", "/api/v1/search?limit=50&q="+url.QueryEscape(c.query), "read", "", &page)
			got, want := rows(), apiIDs(page)
			if len(want) == 0 || !slices.Equal(got, want) {
				b.fatalf("search %q: page shows %v, the API %v", c.query, got, want)
			}
			marks := b.texts("#search-results mark")
			found := false
			for _, m := range marks {
				found = found || strings.Contains(crawlkeeper.FoldSearchText(m), c.mark)
			}
			if len(marks) < len(got) || !found {
				b.errorf("search %q: %d rows and marks %q, want every row marked and %q among them", c.query, len(got), marks, c.mark)
			}
			if v := eval[string](b, "search box", `document.querySelector('#search-box').value`); v != c.query {
				b.errorf("the search box shows %q after the search, want %q", v, c.query)
			}
			if page.Next == "" {
				if b.exists("#next") {
					b.errorf("a next link on the last page")
				}
				return
			}
			b.load("next page", chromedp.Click(chromedp.CSS(`#next`)))
			e.call("GET", "/api/v1/search?limit=50&q="+url.QueryEscape(c.query)+"&cursor="+url.QueryEscape(page.Next), "read", "", &page)
			if got, want := rows(), apiIDs(page); len(want) == 0 || !slices.Equal(got, want) {
				b.errorf("search %q, page 2: page shows %v, the API %v", c.query, got, want)
			}
		})
	}
	b.t = t
	b.expectNoProblems()
}
