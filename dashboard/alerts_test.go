package dashboard_test

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/dashboard"
)

// alertRules fire on the seeded story: round r1 keeps three targets
// remaining, and source news delivers once, at the start.
var alertRules = []crawlkeeper.AlertRule{
	{Name: "r1-stalled", Kind: crawlkeeper.AlertRoundStalled, Round: "r1", Buckets: 3},
	{Name: "quiet-source", Kind: crawlkeeper.AlertIngestStopped, For: crawlkeeper.Duration(6 * time.Hour)},
	{Kind: crawlkeeper.AlertDeadLetters, Threshold: 5},
}

// TestAlertsPageBannerAndBadges: once the rules fire, the Alerts page
// lists each firing alert with its rule, subject and since-when, the
// rules in force with their parameters, and the history; every page
// carries the banner; the rounds and sources tables mark the rows the
// alerts are about. When the alerts resolve, the banner and badges go and
// the history says so.
func TestAlertsPageBannerAndBadges(t *testing.T) {
	e := newEnv(t, envOptions{alerts: alertRules})
	e.seed()

	// Before any evaluation: no banner, the rules are listed, nothing fires.
	_, body, _ := e.get("/alerts", "")
	mustContain(t, "alerts before evaluation", body, `id="no-firing"`, `data-rule="r1-stalled"`, "not evaluated yet", `id="no-history"`)
	if strings.Contains(body, `id="alert-banner"`) {
		t.Error("banner before any alert fired")
	}

	fired := e.now()
	rep := e.evaluateAlerts()
	if len(rep.Fired) != 2 {
		t.Fatalf("fired %+v", rep.Fired)
	}
	e.advance(10 * time.Minute)
	code, body, _ := e.get("/alerts", "")
	if code != 200 {
		t.Fatalf("alerts: %d %s", code, body)
	}
	mustContain(t, "alerts", body,
		`<tr data-rule="r1-stalled"><td class="rule">r1-stalled</td><td>round_stalled</td><td class="subject">round r1</td>`,
		`<tr data-rule="quiet-source"><td class="rule">quiet-source</td><td>ingest_stopped</td><td class="subject">source news</td>`,
		"since "+fired.Format("2006-01-02"), // the banner
		fired.UTC().Format("2006-01-02 15:04:05Z"),
		"10m ago",
		// The rules in force, defaults spelled out.
		`<td>r1-stalled</td><td>round_stalled</td><td>round r1, idle buckets 3</td>`,
		`<td>quiet-source</td><td>ingest_stopped</td><td>for 6h</td>`,
		`<td>dead_letters</td><td>dead_letters</td><td>more than 5</td>`,
		`id="history"`, `data-status="firing"`)
	if n := strings.Count(body, `data-status="firing"`); n != 2 {
		t.Errorf("history: %d firing events, want 2", n)
	}

	for _, p := range []string{"/", "/rounds", "/archive", "/pipeline", "/records", "/fields"} {
		_, body := mustGet(t, e, p)
		mustContain(t, p, body, `id="alert-banner"`, `data-k="firing">2<`, "r1-stalled", `href="/alerts"`)
	}
	_, rounds := mustGet(t, e, "/rounds")
	if !regexp.MustCompile(`data-round="r1"><td><a [^>]*>r1</a> <a class="badge bad alert-badge" href="/alerts" title="alert firing: r1-stalled">`).MatchString(rounds) {
		t.Errorf("rounds: no badge on r1:\n%s", rounds)
	}
	_, r1 := mustGet(t, e, "/rounds/r1")
	mustContain(t, "round r1", r1, `id="round-alerts">Firing on this round: <a class="badge bad alert-badge" href="/alerts">r1-stalled</a>`)
	if _, r2 := mustGet(t, e, "/rounds/r2"); strings.Contains(r2, `id="round-alerts"`) {
		t.Error("round r2: an alert of r1 shown")
	}
	if strings.Contains(rounds, `title="alert firing: quiet-source"`) {
		t.Error("rounds: a source's alert as a round badge")
	}
	_, overview := mustGet(t, e, "/")
	mustContain(t, "overview", overview, `<tr data-source="news"><td><a href="/records?source=news">news</a> <a class="badge bad alert-badge" href="/alerts" title="alert firing: quiet-source">`)
	if strings.Contains(overview, `<tr data-source="jobs"><td><a href="/records?source=jobs">jobs</a> <a class="badge`) {
		t.Error("overview: badge on jobs, which delivers")
	}

	// The API lists the same.
	var l struct {
		Firing []struct{ Rule, Subject string }
		Recent []struct{ Status string }
	}
	e.call("GET", "/api/v1/alerts", "read", "", &l)
	if len(l.Firing) != 2 || l.Firing[0].Subject == "" || len(l.Recent) != 2 {
		t.Fatalf("API alerts: %+v", l)
	}

	// News delivers again and r1's last targets are done: both resolve.
	e.ingest("source=news&round=r1&target=hooli", `{"title":"Back","url":"https://news.test/3"}`)
	e.ingest("source=news&round=r1&target=acme-labs", `{"title":"Back 2","url":"https://news.test/4"}`)
	e.ingest("source=news&round=r1&target=vandelay", `{"title":"Back 3","url":"https://news.test/5"}`)
	if rep := e.evaluateAlerts(); len(rep.Resolved) != 2 {
		t.Fatalf("resolved %+v", rep.Resolved)
	}
	_, body = mustGet(t, e, "/alerts")
	mustContain(t, "alerts after resolving", body, `id="no-firing"`, `data-status="resolved"`, "the condition cleared after 10m")
	for _, p := range []string{"/", "/rounds"} {
		_, body := mustGet(t, e, p)
		if strings.Contains(body, `id="alert-banner"`) || strings.Contains(body, "alert-badge") {
			t.Errorf("%s: banner or badge after the alerts resolved", p)
		}
	}
}

func mustGet(t *testing.T, e *env, path string) (int, string) {
	t.Helper()
	code, body, _ := e.get(path, "")
	if code != 200 {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	return code, body
}

// TestOverviewCharts: the overview draws items per hour from the ingest
// history, records archived per day from the archive journal, and the
// pipeline's freshness, each as a small chart in its card.
func TestOverviewCharts(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	_, body := mustGet(t, e, "/")
	charts := map[string]dashboard.Chart{}
	for _, m := range regexp.MustCompile(`id="(chart-[a-z]+)" data-height="110" data-chart="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		var c dashboard.Chart
		if err := json.Unmarshal([]byte(html.UnescapeString(m[2])), &c); err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		charts[m[1]] = c
	}
	sum := func(c dashboard.Chart) float64 {
		n := 0.0
		for _, v := range c.Series[0].Values {
			if v != nil {
				n += *v
			}
		}
		return n
	}
	// seed ingests 13 items, then 3 a day later and 1 a day after that,
	// and archives one record: the last 48 hours hold the 4 latest.
	if c, ok := charts["chart-ingest"]; !ok || len(c.X) != 48 || sum(c) != 4 {
		t.Errorf("ingest chart: %v, %d hours, %v items", ok, len(c.X), sum(c))
	}
	if c, ok := charts["chart-moves"]; !ok || len(c.X) != 8 || sum(c) != 1 {
		t.Errorf("moves chart: %v, %d days, %v moved", ok, len(c.X), sum(c))
	}
	if c, ok := charts["chart-freshness"]; !ok || len(c.Labels) != 3 {
		t.Errorf("freshness chart %+v", c)
	}
}
