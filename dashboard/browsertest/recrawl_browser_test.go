package browsertest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestBrowserRecrawl draws the recrawl page of two sources crawled daily
// for two weeks: the table shows each source's records, its share fresh
// now and the optimal share at its budget as the API reports them, and
// each source's chart of freshness against the daily budget is drawn with
// legible budgets under it, its own marked "(now)".
func TestBrowserRecrawl(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := newBrowser(t, e.srv.URL)
	b.viewport(1400, 1000)
	for d := range 14 {
		for _, src := range []string{"jobs", "news"} {
			var items []string
			for i := range 40 {
				body := "same"
				if (src == "news" && i < 30) || (src == "jobs" && i%5 == 0 && d%3 == 0) {
					body = fmt.Sprint("edition ", d)
				}
				items = append(items, fmt.Sprintf(`{"title":"%s %d","url":"https://%s.test/%d","body":%q}`, src, i, src, i, body))
			}
			e.ingest("source="+src, items...)
		}
		e.advance(24 * time.Hour)
	}
	e.advance(-12 * time.Hour)
	var rf struct{ Sources []crawlkeeper.SourceFreshness }
	e.call("GET", "/api/v1/recrawl", "read", "", &rf)
	if len(rf.Sources) != 2 {
		t.Fatalf("GET /api/v1/recrawl: %+v", rf)
	}
	b.open("/recrawl")
	for _, sf := range rf.Sources {
		row := fmt.Sprintf(`#recrawl tr[data-source=%q]`, sf.Source)
		b.expectNum(row, "records", int64(sf.Records))
		if got, want := b.texts(row+` [data-k="fresh_now"]`), fmt.Sprintf("%.1f%%", 100*sf.FreshNow); len(got) != 1 || got[0] != want {
			b.errorf("%s fresh now: page %v, API %s", sf.Source, got, want)
		}
		chart := fmt.Sprintf(`.budget-chart[data-source=%q]`, sf.Source)
		b.expectChart(chart)
		l := b.expectLegibleAxis(chart, fmt.Sprintf("%.0f", sf.Curve[len(sf.Curve)-1].Budget), 0.25)
		if l != nil {
			now := 0
			for _, lb := range l.Labels {
				if strings.HasSuffix(lb.Text, "(now)") {
					now++
				}
			}
			if now != 1 {
				b.errorf("%s: the budget axis marks %d budgets (now), want 1: %+v", sf.Source, now, l.Labels)
			}
		}
	}
	// The source whose pages change daily is less fresh at the same pace.
	if rf.Sources[1].Source != "news" || rf.Sources[1].FreshNow >= rf.Sources[0].FreshNow {
		t.Errorf("fresh now: %s %.3f, %s %.3f; want news, which changes daily, below jobs",
			rf.Sources[0].Source, rf.Sources[0].FreshNow, rf.Sources[1].Source, rf.Sources[1].FreshNow)
	}
	b.shot("recrawl-1400.png")
	b.expectNoProblems()
}
