package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tickingClock moves one second forward at every read, so that work
// that reads the clock twice (a pass's start and end, a commit and its
// processing) takes a known, non-zero time, and the test can still move
// it by hours.
type tickingClock struct{ ns atomic.Int64 }

func newTickingClock(t time.Time) *tickingClock {
	c := &tickingClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *tickingClock) now() time.Time { return time.Unix(0, c.ns.Add(int64(time.Second))).UTC() }

// peek returns the clock's time without moving it.
func (c *tickingClock) peek() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

func (c *tickingClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// scrape reads /metrics into a map from series (name and labels as
// exposed) to value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func postItems(t *testing.T, url, body string) map[string]float64 {
	t.Helper()
	res, err := http.Post(url, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sum map[string]any
	if err := json.NewDecoder(res.Body).Decode(&sum); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for k, v := range sum {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// waitFor polls cond until it holds; the work it waits for runs in serve's
// goroutines on real time, not on the test's clock.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// TestMetricsMove runs serve over records ingested before it started,
// lets its first rescan pass process them, ingests through the API (new,
// changed, unchanged, rejected and undated items) so that the real-time
// pipeline processes a notification, runs an archive pass, and checks
// every crawlkeeper metric on /metrics against what happened.
func TestMetricsMove(t *testing.T) {
	c := newCLI(t)
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	c.ok(`{"title":"Data Engineer","url":"https://jobs.example/1","salary":"50k","deadline":"2031-05-01"}
{"title":"SRE","url":"https://jobs.example/2"}
{"title":"Intern","url":"https://jobs.example/3","deadline":"2026-05-01"}
`, "ingest", "--source", "jobs", "--now", t0.Format(time.RFC3339), "-")
	clk := newTickingClock(t0.Add(time.Hour))
	base := startServeWith(t, c, serveOptions{clock: clk.now, archiveEvery: -1})

	// The first pass begins when serve starts and covers the three records.
	var scan struct {
		Pass              int64      `json:"pass"`
		Position          int64      `json:"position"`
		PassStartedAt     *time.Time `json:"pass_started_at"`
		PassFinishedAt    *time.Time `json:"pass_finished_at"`
		OldestProcessedAt *time.Time `json:"oldest_processed_at"`
		Due               int64      `json:"due"`
		NeverProcessed    int64      `json:"never_processed"`
	}
	waitFor(t, "the first pass", func() bool {
		getJSON(t, base+"/api/v1/scan", &scan)
		return scan.PassFinishedAt != nil
	})

	sum := postItems(t, base+"/api/v1/items?source=jobs&round=1&target=acme", `{"title":"Data Engineer","url":"https://jobs.example/1","salary":"60k","deadline":"2031-05-01"}
{"title":"SRE","url":"https://jobs.example/2"}
{"title":"Designer","url":"https://jobs.example/4"}
{"title":"Launch party","url":"https://jobs.example/5","deadline":"not a date at all"}
"not an item"
`)
	if sum["inserted"] != 2 || sum["changed"] != 1 || sum["unchanged"] != 1 || sum["rejected"] != 1 || sum["date_errors"] != 1 {
		t.Fatalf("POST items: %v", sum)
	}
	waitFor(t, "real-time processing", func() bool {
		getJSON(t, base+"/api/v1/scan", &scan)
		return scan.NeverProcessed == 0 && scan.Due == 0
	})
	before := clk.peek()
	var rep struct {
		Archived int `json:"archived"`
	}
	res, err := http.Post(base+"/api/v1/archive", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&rep)
	res.Body.Close()
	if rep.Archived != 1 {
		t.Fatalf("archive pass: %+v", rep)
	}
	getJSON(t, base+"/api/v1/scan", &scan)
	m := scrape(t, base)
	after := clk.peek()

	want := map[string]float64{
		`crawlkeeper_items_total{outcome="inserted"}`:                   2,
		`crawlkeeper_items_total{outcome="changed"}`:                    1,
		`crawlkeeper_items_total{outcome="unchanged"}`:                  1,
		`crawlkeeper_items_total{outcome="revived"}`:                    0,
		`crawlkeeper_items_total{outcome="refreshed"}`:                  0,
		`crawlkeeper_items_rejected_total`:                              1,
		`crawlkeeper_date_errors_total`:                                 1,
		`crawlkeeper_crawled_at_defaulted_total`:                        2, // the inserted items; re-deliveries keep their crawled_at
		`crawlkeeper_archive_moves_total{reason="event"}`:               1,
		`crawlkeeper_archive_runs_total`:                                1,
		`crawlkeeper_records{state="active"}`:                           4,
		`crawlkeeper_records{state="archived"}`:                         1,
		`crawlkeeper_round_targets{round="1",state="done"}`:             1,
		`crawlkeeper_scan_pass`:                                         1,
		`crawlkeeper_scan_position`:                                     3,
		`crawlkeeper_scan_pass_duration_seconds`:                        scan.PassFinishedAt.Sub(*scan.PassStartedAt).Seconds(),
		`crawlkeeper_due_records`:                                       0,
		`crawlkeeper_processed_total{path="rescan",result="written"}`:   3,
		`crawlkeeper_processed_total{path="realtime",result="written"}`: 3,
		`crawlkeeper_notification_lag_seconds_count`:                    1,
	}
	for series, v := range want {
		if got, ok := m[series]; !ok || got != v {
			t.Errorf("%s = %v (exposed: %v), want %v", series, got, ok, v)
		}
	}
	if m[`crawlkeeper_scan_pass_duration_seconds`] <= 0 {
		t.Errorf("pass duration %v: the ticking clock makes every pass take time", m[`crawlkeeper_scan_pass_duration_seconds`])
	}
	// The commit and the processing each read the clock: the lag is at
	// least a second and within the test's span.
	if lag := m[`crawlkeeper_notification_lag_seconds_sum`]; lag < 1 || lag > after.Sub(t0).Seconds() {
		t.Errorf("notification lag %vs", lag)
	}
	if last := m[`crawlkeeper_archive_last_run_timestamp_seconds`]; last < float64(before.Unix()) || last > float64(after.Unix()) {
		t.Errorf("last archive run at %v, want between %v and %v", last, before.Unix(), after.Unix())
	}
	age := m[`crawlkeeper_oldest_processed_age_seconds`]
	if lo, hi := before.Sub(*scan.OldestProcessedAt).Seconds(), after.Sub(*scan.OldestProcessedAt).Seconds(); age < lo || age > hi || age <= 0 {
		t.Errorf("oldest processed age %vs, want between %v and %v", age, lo, hi)
	}
	if m[`crawlkeeper_http_request_duration_seconds_count{code="200",method="POST",route="POST /api/v1/archive"}`] != 1 {
		t.Errorf("the archive request is not in the HTTP latency histogram")
	}
	for series := range m {
		if strings.HasPrefix(series, "crawlkeeper_errors_total") {
			t.Errorf("%s = %v: nothing failed", series, m[series])
		}
	}

	// A day and more later every active record is due again, and the
	// oldest processed time has aged with the clock.
	clk.advance(25 * time.Hour)
	m = scrape(t, base)
	if got := m[`crawlkeeper_due_records`]; got != 4 {
		t.Errorf("due records a day later: %v, want 4", got)
	}
	if got := m[`crawlkeeper_oldest_processed_age_seconds`]; got < age+25*3600 {
		t.Errorf("oldest processed age a day later: %vs, want at least %vs", got, age+25*3600)
	}
}
