package browsertest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// chromiumEnv, when set, names the browser to use and makes a missing one
// an error instead of a skip (CI sets it).
const chromiumEnv = "CRAWLKEEPER_TEST_CHROMIUM"

// browser drives one headless Chromium against a test server. Every check
// that fails saves a screenshot first and names its path.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu sync.Mutex
	// problems are console errors and uncaught exceptions, which include
	// Content-Security-Policy violations: the pages must have none.
	problems []problem
	shots    int
}

type problem struct{ source, url, text string }

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path := chromiumPath
	if p := os.Getenv(chromiumEnv); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv(chromiumEnv) != "" {
			t.Fatalf("%s=%s: %v", chromiumEnv, path, err)
		}
		t.Skipf("skipping the browser tests: no Chromium at %s (install Debian's package: apt-get install -y chromium)", path)
	}
	// These flags keep Chromium from reaching out to the network on its
	// own (updates, sync, field trials), which a closed network refuses
	// slowly; the profile is new and empty each time.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx, base: base}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.problems = append(b.problems, problem{source: m.Source, url: m.URL, text: fmt.Sprintf("%s at %s: %s", m.Type, m.URL, m.Text)})
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// screenshotDir is the test's artifact folder with -artifacts, and a
// folder that outlives the test otherwise, so a failure can be looked at.
func (b *browser) screenshotDir() string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return b.t.ArtifactDir()
	}
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(b.t.Name(), "_")
	dir := filepath.Join(os.TempDir(), "crawlkeeper-screenshots", name)
	os.MkdirAll(dir, 0o755)
	return dir
}

// screenshot saves the page as it is and returns the file's path.
func (b *browser) screenshot() string {
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return "none (" + err.Error() + ")"
	}
	b.shots++
	path := filepath.Join(b.screenshotDir(), fmt.Sprintf("failure-%d.png", b.shots))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "none (" + err.Error() + ")"
	}
	return path
}

func (b *browser) errorf(format string, args ...any) {
	b.t.Helper()
	path := b.screenshot()
	b.t.Errorf(format+"\n    screenshot: %s", append(args, path)...)
}

func (b *browser) fatalf(format string, args ...any) {
	b.t.Helper()
	path := b.screenshot()
	b.t.Fatalf(format+"\n    screenshot: %s", append(args, path)...)
}

// do runs actions; a step that fails or takes over 30 seconds is fatal.
func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fatalf("%s: %v", step, err)
	}
}

// load runs actions that navigate (a link, a form) and waits until the
// new page has loaded.
func (b *browser) load(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		b.fatalf("%s: %v", step, err)
	}
	if res.Status >= 500 {
		b.fatalf("%s: status %d", step, res.Status)
	}
}

func (b *browser) open(path string) {
	b.t.Helper()
	b.load("open "+path, chromedp.Navigate(b.base+path))
}

func eval[T any](b *browser, step, js string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	if err != nil {
		b.fatalf("%s: %v", step, err)
	}
	return v
}

func jsString(s string) string { q, _ := json.Marshal(s); return string(q) }

// num reads the number shown under data-k=key inside the element scope
// selects (the page when scope is empty).
func (b *browser) num(scope, key string) int64 {
	b.t.Helper()
	root := "document"
	if scope != "" {
		root = "document.querySelector(" + jsString(scope) + ")"
	}
	js := fmt.Sprintf(`(() => { const r = %s; const el = r && r.querySelector('[data-k=%s]'); return el ? el.textContent : "" })()`, root, jsString(key))
	text := eval[string](b, "read "+key, js)
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(text), ",", ""), 10, 64)
	if err != nil {
		b.fatalf("number %q in %q: shown %q", key, scope, text)
	}
	return n
}

func (b *browser) expectNum(scope, key string, want int64) {
	b.t.Helper()
	if got := b.num(scope, key); got != want {
		b.errorf("%s %s: page shows %d, the API says %d", scope, key, got, want)
	}
}

// texts returns the text of every element sel matches.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	return eval[[]string](b, "read "+sel, `Array.from(document.querySelectorAll(`+jsString(sel)+`), e => e.textContent.trim())`)
}

func (b *browser) exists(sel string) bool {
	b.t.Helper()
	return eval[bool](b, "look for "+sel, `document.querySelector(`+jsString(sel)+`) !== null`)
}

// chartInfo is what the page says about a drawn chart.
type chartInfo struct {
	Canvases int `json:"canvases"`
	Width    int `json:"width"`
	Height   int `json:"height"`
	// Ink counts pixels in a series colour of app.js's palette.
	Ink   int `json:"ink"`
	Drawn int `json:"drawn"`
}

// expectChart waits for app.js to draw the chart sel selects and checks
// that its canvas has a size and pixels in the series colours.
func (b *browser) expectChart(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	wait := fmt.Sprintf(`(() => { const el = document.querySelector(%s); return !!el && +el.getAttribute("data-drawn") > 0 })()`, jsString(sel))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](wait)); err != nil {
		b.errorf("chart %s was not drawn: %v", sel, err)
		return
	}
	js := fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		const cs = el.querySelectorAll("canvas");
		const out = {canvases: cs.length, width: 0, height: 0, ink: 0, drawn: +el.getAttribute("data-drawn")};
		if (!cs.length) return out;
		const c = cs[0];
		out.width = c.width; out.height = c.height;
		if (!c.width || !c.height) return out;
		const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		const palette = [[37, 99, 235], [220, 38, 38], [22, 163, 74], [147, 51, 234]];
		for (let i = 0; i < px.length; i += 4) {
			if (px[i + 3] < 60) continue;
			for (const [r, g, b] of palette) {
				if (Math.abs(px[i] - r) < 40 && Math.abs(px[i + 1] - g) < 40 && Math.abs(px[i + 2] - b) < 40) { out.ink++; break; }
			}
		}
		return out;
	})()`, jsString(sel))
	info := eval[chartInfo](b, "inspect chart "+sel, js)
	if info.Canvases == 0 || info.Width == 0 || info.Height == 0 || info.Ink < 10 {
		b.errorf("chart %s: %+v, want a canvas with a size and drawn series", sel, info)
	}
}

// expectNoProblems fails on console errors and exceptions, except the
// failed loads of the paths given: the statuses that a test provoked.
func (b *browser) expectNoProblems(provoked ...string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		if p.source == "network" && slices.ContainsFunc(provoked, func(path string) bool { return strings.HasSuffix(p.url, path) }) {
			continue
		}
		b.t.Errorf("browser console: %s", p.text)
	}
}

// metric reads a counter from /metrics.
func (e *env) metric(name string) int64 {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\d+)$`).FindSubmatch(b)
	if m == nil {
		e.t.Fatalf("no %s in /metrics", name)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// TestBrowserPages loads every page in Chromium against a running server
// with seeded data, compares what the pages show with the API's JSON,
// checks the charts were drawn, clicks through the records browser to a
// record's history, and runs the dry-run preview and a dead-letter retry.
func TestBrowserPages(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := e.seed()
	b := newBrowser(t, e.srv.URL)
	start := time.Now()

	t.Run("overview", func(t *testing.T) {
		b.t = t
		var stats crawlkeeper.Stats
		e.call("GET", "/api/v1/stats", "read", "", &stats)
		var scan pipeline.Status
		e.call("GET", "/api/v1/scan", "read", "", &scan)
		b.open("/")
		b.expectNum("", "active", stats.Active)
		b.expectNum("", "archived", stats.Archived)
		b.expectNum("", "date_errors", stats.DateErrors)
		b.expectNum("", "due", scan.Due)
		b.expectNum("", "unchanged", e.metric(`crawlkeeper_items_total{outcome="unchanged"}`))
	})
	t.Run("rounds", func(t *testing.T) {
		b.t = t
		var list struct{ Rounds []crawlkeeper.RoundSummary }
		e.call("GET", "/api/v1/rounds", "read", "", &list)
		b.open("/rounds")
		for _, r := range list.Rounds {
			row := `tr[data-round="` + r.Round + `"]`
			b.expectNum(row, "queued", r.Queued)
			b.expectNum(row, "done", r.Done)
			b.expectNum(row, "failed", r.Failed)
			b.expectNum(row, "remaining", r.Remaining)
		}
		b.load("click round r1", chromedp.Click(chromedp.CSS(`tr[data-round="r1"] a`)))

		var st crawlkeeper.RoundStatus
		e.call("GET", "/api/v1/rounds/r1", "read", "", &st)
		b.expectNum("", "done", st.Done)
		b.expectNum("", "remaining", st.Remaining)
		b.expectChart("#throughput")
		var rem struct{ Targets []string }
		e.call("GET", "/api/v1/rounds/r1/remaining", "read", "", &rem)
		if got := b.texts("#targets li"); !slices.Equal(got, rem.Targets) {
			b.errorf("remaining targets %v, API %v", got, rem.Targets)
		}
		b.load("search remaining targets",
			chromedp.SendKeys(chromedp.CSS(`#remaining-search input[name=q]`), "ACME"),
			chromedp.Submit(chromedp.CSS(`#remaining-search input[name=q]`)))
		var want []string
		for _, n := range rem.Targets {
			if strings.Contains(n, "acme") {
				want = append(want, n)
			}
		}
		if got := b.texts("#targets li"); !slices.Equal(got, want) || len(want) == 0 {
			b.errorf("search for ACME: %v, want %v", got, want)
		}
		b.load("compare with r2",
			chromedp.SetValue(chromedp.CSS(`#diff-form select[name=vs]`), "r2"),
			chromedp.Submit(chromedp.CSS(`#diff-form select[name=vs]`)))
		var diff crawlkeeper.RoundDiff
		e.call("GET", "/api/v1/rounds/r1/diff/r2", "read", "", &diff)
		b.expectNum("#diff", "only_round", diff.OnlyRound.Count)
		b.expectNum("#diff", "only_vs", diff.OnlyVs.Count)
		if got := b.texts("#diff-names li"); !slices.Equal(got, diff.OnlyRound.Names) {
			b.errorf("diff names %v, API %v", got, diff.OnlyRound.Names)
		}
	})
	t.Run("fields", func(t *testing.T) {
		b.t = t
		var fs struct{ Fields []crawlkeeper.FieldReport }
		e.call("GET", "/api/v1/fields", "read", "", &fs)
		b.open("/fields")
		b.expectChart("#fillrate")
		var remote *crawlkeeper.FieldReport
		for i, f := range fs.Fields {
			row := `tr[data-field="` + f.Source + "/" + f.Field + `"]`
			b.expectNum(row, "present", f.Present)
			b.expectNum(row, "filled", f.Filled)
			if f.Field == "remote" {
				remote = &fs.Fields[i]
			}
		}
		if remote == nil || len(remote.Samples) == 0 {
			t.Fatalf("API fields: %+v, want jobs/remote with samples", fs.Fields)
		}
		if got := b.texts(`tr[data-field="jobs/remote"] [data-k=enough]`); len(got) != 1 || got[0] != "collecting" {
			b.errorf("enough state %v, want collecting", got)
		}
		b.load("click a sample", chromedp.Click(chromedp.CSS(`tr[data-field="jobs/remote"] td.samples a`)))
		var rec crawlkeeper.Record
		e.call("GET", fmt.Sprintf("/api/v1/records/%d", remote.Samples[0]), "read", "", &rec)
		if got := b.texts("#title"); len(got) != 1 || got[0] != rec.Title {
			b.errorf("sample record page shows %v, API title %q", got, rec.Title)
		}
	})
	t.Run("archive", func(t *testing.T) {
		b.t = t
		b.open("/archive")
		b.expectChart("#moves")
		b.expectChart("#lifetimes")
		b.expectChart("#changes")
		var dry crawlkeeper.ArchiveReport
		e.call("POST", "/api/v1/archive?dry_run=true", "admin", "", &dry)
		b.load("preview", chromedp.Click(chromedp.CSS("#preview")))
		if !b.exists(`#report[data-dry-run="true"]`) {
			b.fatalf("no dry-run report after the preview")
		}
		b.expectNum("#report", "report_archived", int64(dry.Archived))
		b.expectNum("#report", "report_event", int64(dry.ByReason[crawlkeeper.ReasonEvent]))
		var stats crawlkeeper.Stats
		e.call("GET", "/api/v1/stats", "read", "", &stats)
		if dry.Archived != 1 || stats.Archived != 1 {
			t.Errorf("the preview moved records: dry run %+v, archived %d", dry, stats.Archived)
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		b.t = t
		var scan pipeline.Status
		e.call("GET", "/api/v1/scan", "read", "", &scan)
		var dls struct {
			DeadLetters []crawlkeeper.DeadLetter `json:"dead_letters"`
		}
		e.call("GET", "/api/v1/deadletters", "read", "", &dls)
		b.open("/pipeline")
		b.expectNum("", "due", scan.Due)
		b.expectNum("", "active", scan.Active)
		b.expectNum("", "never", scan.NeverProcessed)
		b.expectNum("", "dead_letters", int64(scan.DeadLetters))
		b.expectChart("#freshness")
		if got := b.texts("#dead-letters tbody tr"); len(got) != len(dls.DeadLetters) || len(got) != 1 {
			b.errorf("%d dead letters shown, API %d", len(got), len(dls.DeadLetters))
		}
		b.load("retry all", chromedp.Click(chromedp.CSS("#retry-all")))
		b.expectNum("#retry-result", "retried", 1)
		b.expectNum("#retry-result", "retry_processed", 1)
		e.call("GET", "/api/v1/deadletters", "read", "", &dls)
		if len(dls.DeadLetters) != 0 || !b.exists("#no-dead-letters") {
			b.errorf("after the retry: API %v, page without the empty list", dls.DeadLetters)
		}
	})
	t.Run("records", func(t *testing.T) {
		b.t = t
		var page httpapi.RecordsPage
		e.call("GET", "/api/v1/records", "read", "", &page)
		b.open("/records")
		ids := func() []string { return b.texts("#records tbody tr td:first-child") }
		var want []string
		for _, r := range page.Records {
			want = append(want, strconv.FormatInt(r.ID, 10))
		}
		if got := ids(); !slices.Equal(got, want) {
			b.errorf("records %v, API %v", got, want)
		}
		b.load("search records",
			chromedp.SendKeys(chromedp.CSS(`#records-search input[name=q]`), "engineer"),
			chromedp.Submit(chromedp.CSS(`#records-search input[name=q]`)))
		e.call("GET", "/api/v1/records?q=engineer", "read", "", &page)
		if got := ids(); len(page.Records) != 1 || !slices.Equal(got, []string{strconv.FormatInt(page.Records[0].ID, 10)}) {
			b.fatalf("search engineer: %v, API %+v", got, page.Records)
		}
		b.load("open the record", chromedp.Click(chromedp.CSS(`#records a.title`)))
		var hist httpapi.HistoryBody
		e.call("GET", fmt.Sprintf("/api/v1/records/%d/history", s.engineerID), "read", "", &hist)
		if got := b.texts("#version"); len(got) != 1 || got[0] != strconv.FormatInt(hist.Record.Version, 10) {
			b.errorf("version %v, API %d", got, hist.Record.Version)
		}
		// One entry per kept version plus the current one.
		if got := b.texts("#history > li"); len(got) != len(hist.Versions)+1 {
			b.errorf("%d versions shown, API %d kept and the current one", len(got), len(hist.Versions))
		}
		// The salary changed from the kept version to the current one: the
		// diff names it with both values, and the item's field is
		// highlighted.
		cur := fmt.Sprintf(`#history > li[data-version="%d"]`, hist.Record.Version)
		if got := b.texts(cur + ` tr.changed[data-path="salary"] code`); !slices.Equal(got, []string{"salary", `"50k"`, `"60k"`}) {
			b.errorf("diff row for salary: %v", got)
		}
		if got := b.texts(cur + " tbody tr"); len(got) != 1 {
			b.errorf("diff rows %v, want only the salary", got)
		}
		bg := eval[string](b, "highlight", `getComputedStyle(document.querySelector('#item tr[data-field="salary"] td')).backgroundColor`)
		plain := eval[string](b, "no highlight", `getComputedStyle(document.querySelector('#item tr[data-field="title"] td')).backgroundColor`)
		if bg == plain || bg == "rgba(0, 0, 0, 0)" {
			b.errorf("salary field background %q, title %q: want the salary highlighted", bg, plain)
		}
	})
	// Last: it fails and re-queues targets the subtests above count.
	t.Run("failed", func(t *testing.T) {
		b.t = t
		testBrowserFailed(t, e, b)
	})
	t.Log("browser checks took", time.Since(start).Round(time.Millisecond))
	b.t = t
	b.expectNoProblems()
}

// failedRows reads the round page's failed list: each row's cells, joined
// by " | ".
func failedRows(b *browser) []string {
	b.t.Helper()
	return eval[[]string](b, "read the failed list", `Array.from(document.querySelectorAll("#failed-list tbody tr"), tr => Array.from(tr.cells, c => c.textContent.trim()).join(" | "))`)
}

// testBrowserFailed checks the round page's failed targets against the
// API (reasons, the filter for targets that failed in two rounds), copies
// and downloads their names, and re-queues them into a new round through
// the confirmation.
func testBrowserFailed(t *testing.T, e *env, b *browser) {
	e.call("POST", "/api/v1/rounds/r1/fail?reason=HTTP%20503", "ingest", `["hooli",{"target":"vandelay","reason":"robots.txt disallows /"}]`, nil)
	e.call("POST", "/api/v1/rounds/r2/fail", "ingest", `[{"target":"vandelay","reason":"timeout after 30s"}]`, nil)
	var page crawlkeeper.FailedPage
	e.call("GET", "/api/v1/rounds/r1/failed", "read", "", &page)
	var want []string
	var names []string
	for _, ft := range page.Targets {
		want = append(want, ft.Target+" | "+ft.Reason)
		names = append(names, ft.Target)
	}
	if len(want) != 3 {
		t.Fatalf("API failed list of r1: %+v", page)
	}
	b.open("/rounds/r1")
	b.expectNum("#failed-summary", "failed_listed", page.Count)
	if got := failedRows(b); !slices.Equal(got, want) {
		b.errorf("failed list %q, API %q", got, want)
	}

	// Failed in r1 and in r2: vandelay, with both reasons.
	b.load("filter: failed in r2 too",
		chromedp.SetValue(chromedp.CSS(`#failed-filter select[name=also]`), "r2"),
		chromedp.Submit(chromedp.CSS(`#failed-filter select[name=also]`)))
	var both crawlkeeper.FailedPage
	e.call("GET", "/api/v1/rounds/r1/failed?also=r2", "read", "", &both)
	b.expectNum("#failed-summary", "failed_listed", both.Count)
	if got := failedRows(b); both.Count != 1 || !slices.Equal(got, []string{"vandelay | robots.txt disallows / | timeout after 30s"}) {
		b.errorf("failed in r1 and r2: %q, API %+v", got, both)
	}
	// The download link serves the filter's names; the copy button copies
	// the names of the page.
	text := eval[string](b, "download", `fetch(document.querySelector("#failed-download").href).then(r => r.text())`, chromedp.EvalAwaitPromise)
	if text != "vandelay\n" {
		b.errorf("downloaded %q, want vandelay", text)
	}
	b.do("copy", chromedp.Click(chromedp.CSS("#failed-copy")))
	b.do("copied", chromedp.WaitVisible(chromedp.CSS(`#failed-copied:not(:empty)`)))
	if got := b.texts("#failed-copied"); !slices.Equal(got, []string{"Copied 1 name."}) {
		b.errorf("after copying: %q", got)
	}
	if got := eval[string](b, "copied text", `document.querySelector("#failed-copy").getAttribute("data-copy-text")`); got != "vandelay\n" {
		b.errorf("copied %q", got)
	}

	// Re-queue every failure of r1 into r1-retry: a confirmation first,
	// which queues nothing.
	b.open("/rounds/r1")
	b.load("re-queue", chromedp.Click(chromedp.CSS("#requeue")))
	b.expectNum("#requeue-confirm", "requeue_count", page.Count)
	if got := b.texts("#requeue-names li"); !slices.Equal(got, names) {
		b.errorf("names to re-queue %q, want %q", got, names)
	}
	if _, err := e.mon.Status(context.Background(), "r1-retry"); crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
		b.fatalf("the confirmation queued already: round r1-retry answers %v", err)
	}
	b.load("confirm", chromedp.Click(chromedp.CSS("#requeue-yes")))
	b.expectNum("#requeue-result", "requeued", page.Count)
	if !b.exists("#notice") {
		b.errorf("no notice after the re-queue")
	}
	b.load("open the new round", chromedp.Click(chromedp.CSS("#requeue-into")))
	var st crawlkeeper.RoundStatus
	e.call("GET", "/api/v1/rounds/r1-retry", "read", "", &st)
	if st.Queued != page.Count || st.Remaining != page.Count {
		b.errorf("round r1-retry: %+v, want the %d failures queued", st, page.Count)
	}
	b.expectNum("", "remaining", st.Remaining)
	if got := b.texts("#targets li"); !slices.Equal(got, names) {
		b.errorf("remaining in r1-retry %q, want %q", got, names)
	}
}

// TestBrowserLogin checks the dashboard on a server with tokens: no token
// leads to the login page, a read token sees the pages without admin
// buttons and has admin actions refused, an admin token may act, and no
// page or script ever sees a token.
func TestBrowserLogin(t *testing.T) {
	e := newEnv(t, envOptions{tokens: testTokens})
	e.seed()
	b := newBrowser(t, e.srv.URL)
	start := time.Now()
	path := func() string {
		return eval[string](b, "location", `location.pathname + location.search`)
	}
	login := func(tok string) {
		b.t.Helper()
		b.load("log in", chromedp.SendKeys(chromedp.CSS(`#login input[name=token]`), tok), chromedp.Submit(chromedp.CSS(`#login input[name=token]`)))
	}
	noTokens := func(where string) {
		b.t.Helper()
		html := eval[string](b, "page source", `document.documentElement.outerHTML + "\n" + document.cookie`)
		for _, tok := range []string{readToken, adminToken, ingestToken} {
			if strings.Contains(html, tok) {
				b.errorf("%s: a token is visible to the page", where)
			}
		}
	}
	status := func(method, url string) int {
		b.t.Helper()
		js := fmt.Sprintf(`fetch(%s, {method: %s}).then(r => r.status)`, jsString(url), jsString(method))
		return eval[int](b, method+" "+url, js, chromedp.EvalAwaitPromise)
	}

	b.open("/records?q=SRE")
	if got := path(); got != "/login?next=%2Frecords%3Fq%3DSRE" || !b.exists("#login") {
		b.fatalf("without a token: at %s, want the login page", got)
	}
	login("not-a-token")
	if got := b.texts("#error"); len(got) != 1 || got[0] != "unknown token" {
		b.errorf("wrong token: %v", got)
	}
	noTokens("after a wrong token")

	login(readToken)
	if got := path(); got != "/records?q=SRE" {
		b.errorf("after login: at %s, want the page asked for", got)
	}
	if got := b.texts("#user"); len(got) != 1 || got[0] != "viewer (read)" {
		b.errorf("user shown %v", got)
	}
	noTokens("records as reader")
	for _, p := range []string{"/", "/rounds/r1", "/fields", "/archive", "/pipeline"} {
		b.open(p)
		if b.exists("#login") || b.exists("#error") {
			b.errorf("%s with a read token: not shown", p)
		}
		if b.exists("#preview") || b.exists("#force") || b.exists("#retry-all") || b.exists("#requeue") {
			b.errorf("%s shows admin buttons to a read token", p)
		}
		noTokens(p)
	}
	b.open("/archive")
	if !b.exists("#admin-only") {
		b.errorf("archive page: no note that admin actions need the admin scope")
	}
	// The forms' targets refuse the read token even when posted directly;
	// the API takes the same cookie with the same scopes.
	for _, c := range []struct {
		method, url string
		want        int
	}{
		{"POST", "/archive/preview", 403},
		{"POST", "/pipeline/retry", 403},
		{"POST", "/rounds/r1/requeue", 403},
		{"POST", "/api/v1/archive?dry_run=true", 403},
		{"GET", "/api/v1/stats", 200},
	} {
		if got := status(c.method, c.url); got != c.want {
			b.errorf("%s %s with the read cookie: %d, want %d", c.method, c.url, got, c.want)
		}
	}

	b.load("log out", chromedp.Click(chromedp.CSS(`header form button`)))
	b.open("/")
	if got := path(); !strings.HasPrefix(got, "/login") {
		b.errorf("after logout: at %s, want the login page", got)
	}
	login(adminToken)
	b.open("/archive")
	if got := b.texts("#user"); len(got) != 1 || got[0] != "operator (admin)" {
		b.errorf("user shown %v", got)
	}
	b.load("preview as admin", chromedp.Click(chromedp.CSS("#preview")))
	if !b.exists(`#report[data-dry-run="true"]`) {
		b.errorf("no dry-run report for the admin")
	}
	noTokens("archive as admin")
	t.Log("browser checks took", time.Since(start).Round(time.Millisecond))
	b.expectNoProblems("/login", "/archive/preview", "/pipeline/retry", "/rounds/r1/requeue", "/api/v1/archive?dry_run=true")
}
