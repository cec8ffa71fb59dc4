package browsertest_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var updateDocs = flag.Bool("update-docs", false, "also write the demo's screenshots to docs/images (when small)")

// docsImageMax bounds the screenshots copied to docs/images: the
// repository keeps them only while they stay small.
const docsImageMax = 400 << 10

// startDemo builds crawlkeeper from the repository root and runs
// `crawlkeeper demo` at speed (simulated seconds per second) on a free
// port, and returns its URL once it serves, with how long the demo took
// to get there. The demo first replays its simulated week, so it may
// take a while; the process is stopped at the end of the test.
func startDemo(t *testing.T, speed int) (string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "crawlkeeper")
	build := exec.Command("go", "build", "-o", bin, "./cmd/crawlkeeper")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build crawlkeeper: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "demo", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--speed", fmt.Sprint(speed))
	// The demo's own configuration, whatever the environment says.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CRAWLKEEPER_CONFIG=") && !strings.HasPrefix(kv, "CRAWLKEEPER_TOKENS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	logPath := filepath.Join(dir, "demo.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("demo log:\n%s", b)
		}
	})
	serving := regexp.MustCompile(`serving on (http://\S+?)/?$`)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			t.Logf("demo: %s", sc.Text())
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("the demo stopped before serving")
		}
		return u, time.Since(began)
	case <-time.After(4 * time.Minute):
		t.Fatalf("the demo did not serve within 4 minutes")
	}
	return "", 0
}

// shot saves a screenshot of the whole page under name in the test's
// screenshot folder, and in docs/images with -update-docs when small.
func (b *browser) shot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.screenshotDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if *updateDocs && len(png) <= docsImageMax {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", name), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.t.Logf("screenshot %s: %s (%d KB)", name, path, len(png)>>10)
	return path
}

// TestBrowserDemoFirstMinute runs the real `crawlkeeper demo` and looks
// at it in Chromium within the first minute after it starts serving: the
// simulated week is there at once (records active and archived, items
// counted and duplicates avoided, archive passes, a chart of items per
// hour and of moves per day, freshness), the
// demo's incidents have set off its alert rules (a stalled events round,
// the silent news site, the jobs round without salaries), and the
// operator sees them where they look: the banner on every page, the
// Alerts page with each alert's rule and since-when, the rules in force
// and the history, and badges on the rounds and sources concerned. All of
// it reads on the demo's clock at 1400 pixels: the ingest rate covers the
// replayed week, the last evaluation of the rules is no older than their
// interval, and the names under the category charts (the rare fields'
// rounds, the lifetimes, the sources) neither overlap nor leave their
// chart. It takes screenshots of the overview, the Alerts, Archive and
// Rare fields pages and checks what they show.
func TestBrowserDemoFirstMinute(t *testing.T) {
	b := newBrowser(t, "")
	// As wide as a laptop's browser: every page must read well there.
	b.viewport(1400, 1000)
	// At 20 simulated seconds per second the first minute covers 20
	// simulated minutes: every alert firing at the start still fires.
	base, took := startDemo(t, 20)
	b.base = base
	t.Logf("the demo served after %s (building included)", took.Round(time.Second))
	deadline := time.Now().Add(time.Minute)

	b.open("/")
	b.do("wait for the overview's charts", chromedp.WaitVisible("#chart-moves"))
	for _, sel := range []string{"#chart-ingest", "#chart-moves", "#chart-freshness"} {
		b.expectChart(sel)
	}
	overview := b.shot("demo-overview.png")
	// The simulated week went through the counted ingest path: items
	// since start and duplicates avoided count it.
	for _, k := range []string{"active", "archived", "date_errors", "accepted", "unchanged"} {
		if n := b.num("", k); n <= 0 {
			b.errorf("overview %s: %d in the first minute of the demo (screenshot %s)", k, n, overview)
		}
	}
	b.expectRateOverPast("first view")
	b.expectLegibleAxis("#chart-freshness", "never", 1)
	if !b.exists("#alert-banner") {
		b.errorf("overview: no alert banner while the demo's alerts fire")
	}
	if n := b.num("#alert-banner", "firing"); n < 3 {
		b.errorf("banner: %d alerts firing, want the demo's three incidents", n)
	}
	badges := map[string][]string{}
	for _, src := range []string{"news.example.fr", "jobs.example.com", "uni.example.jp"} {
		badges[src] = b.texts(`#sources tr[data-source="` + src + `"] .alert-badge`)
	}
	if !slicesContain(badges["news.example.fr"], "news-stopped-delivering") || !slicesContain(badges["jobs.example.com"], "jobs-salary-coverage") || len(badges["uni.example.jp"]) != 0 {
		b.errorf("source badges %v, want news-stopped-delivering on news and jobs-salary-coverage on jobs, none on uni", badges)
	}

	b.open("/alerts")
	b.do("wait for the alerts", chromedp.WaitVisible("#firing"))
	alertsShot := b.shot("demo-alerts.png")
	type row struct{ Rule, Subject, Since string }
	rows := eval[[]row](b, "read the firing alerts", `Array.from(document.querySelectorAll("#firing tbody tr"), tr => ({
		rule: tr.querySelector(".rule").textContent.trim(),
		subject: tr.querySelector(".subject").textContent.trim(),
		since: tr.querySelector(".since").textContent.trim()}))`)
	found := map[string]row{}
	for _, r := range rows {
		found[r.Rule] = r
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ`)
	for rule, subject := range map[string]string{
		"events-round-stalled":    "round events-",
		"news-stopped-delivering": "source news.example.fr",
		"jobs-salary-coverage":    "source jobs.example.com field salary",
	} {
		r, ok := found[rule]
		switch {
		case !ok:
			b.errorf("Alerts page (%s): %s is not firing; rows %+v", alertsShot, rule, rows)
		case !strings.HasPrefix(r.Subject, subject):
			b.errorf("Alerts page: %s on %q, want %q", rule, r.Subject, subject)
		case !stamp.MatchString(r.Since) || !strings.Contains(r.Since, "ago"):
			b.errorf("Alerts page: %s since %q, want a time and how long ago", rule, r.Since)
		}
	}
	// The last evaluation and the interval read on the demo's clock: the
	// rules were evaluated no longer ago than they are evaluated every.
	evaluated := eval[string](b, "read when the rules were evaluated", `document.querySelector("main > p.muted").textContent`)
	if m := regexp.MustCompile(`\(([^)]+) ago\), every ([0-9dhms ]+?) by`).FindStringSubmatch(evaluated); m == nil {
		b.errorf("Alerts page: %q does not say when and how often the rules are evaluated", evaluated)
	} else if ago, every := pageDuration(b, m[1]), pageDuration(b, m[2]); ago > every+every/2 {
		b.errorf("Alerts page: evaluated %s ago, every %s: two clocks (%q)", m[1], m[2], evaluated)
	}
	if n := len(b.texts(`#rules tbody tr`)); n != 5 {
		b.errorf("Alerts page: %d rules in force, want the demo's 5", n)
	}
	// The simulated week had the incidents before: fired and resolved.
	if n := len(b.texts(`#history tr[data-status="resolved"]`)); n < 3 {
		b.errorf("Alerts page: %d resolved alerts in the history of the simulated week, want the earlier incidents'", n)
	}

	// Seconds later (minutes of the demo's clock, well inside the rate's
	// 15-minute window), the overview still measures the ingest rate over
	// the replayed week.
	b.open("/")
	b.expectRateOverPast("second view")

	b.open("/rounds")
	stalled := found["events-round-stalled"].Subject
	round := strings.TrimPrefix(stalled, "round ")
	if got := b.texts(`#rounds tr[data-round="` + round + `"] .alert-badge`); !slicesContain(got, "events-round-stalled") {
		b.errorf("rounds: badges %v on %s, want events-round-stalled", got, round)
	}
	if got := b.texts(`#rounds .alert-badge`); len(got) != 1 {
		b.errorf("rounds: badges %v, want one on the stalled round", got)
	}
	if !b.exists("#alert-banner") {
		b.errorf("rounds: no alert banner")
	}

	b.open("/archive")
	if body := eval[string](b, "read the archive page", `document.querySelector("main").textContent`); strings.Contains(body, "Nothing archived yet") {
		b.errorf("archive page: %q in the first minute of the demo", "Nothing archived yet")
	}
	if n := len(b.texts(`#runs tbody tr`)); n < 20 {
		b.errorf("archive page: %d passes listed, want the simulated week's", n)
	}
	b.expectChart("#moves")
	b.shot("demo-archive.png")
	b.expectLegibleAxis("#lifetimes", "≥ 90d", 1)
	b.expectLegibleAxis("#changes", eval[string](b, "read the last source of the changes chart", `JSON.parse(document.querySelector("#changes").getAttribute("data-chart")).labels.at(-1)`), 1)

	// The rare fields of the jobs site, one point per round: the rounds'
	// names under the chart must be legible at this width.
	b.open("/fields")
	b.expectChart("#fillrate")
	b.shot("demo-fields.png")
	newest := eval[string](b, "read the newest round of the chart", `JSON.parse(document.querySelector("#fillrate").getAttribute("data-chart")).labels.at(-1)`)
	b.expectLegibleAxis("#fillrate", newest, 0.25)

	if time.Now().After(deadline) {
		t.Errorf("the checks took past the demo's first minute")
	}
	b.expectNoProblems()
}

func slicesContain(xs []string, want string) bool {
	for _, x := range xs {
		if x == want {
			return true
		}
	}
	return false
}

// expectRateOverPast checks the overview's ingest rate: items per minute
// over the demo's replayed week at least (its default --past), on the
// demo's clock, not over the minutes since the page was first viewed.
func (b *browser) expectRateOverPast(when string) {
	b.t.Helper()
	card := eval[string](b, "read the ingest rate card", `document.querySelector("[data-k=rate]").closest(".card").textContent`)
	m := regexp.MustCompile(`([0-9.,]+)\s*items/min\s*over the last ([0-9dhms ]+);`).FindStringSubmatch(card)
	if m == nil {
		b.errorf("overview (%s): ingest rate card %q", when, card)
		return
	}
	rate, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if over := pageDuration(b, m[2]); rate <= 0 || over < 7*24*time.Hour {
		b.errorf("overview (%s): %s items/min over the last %s, want the rate over the replayed week", when, m[1], m[2])
	}
}

// pageDuration reads a duration as the dashboard prints it ("7d 2h",
// "12m 5s").
func pageDuration(b *browser, s string) time.Duration {
	b.t.Helper()
	units := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}
	var d time.Duration
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f[:len(f)-1])
		if err != nil || units[f[len(f)-1]] == 0 {
			b.fatalf("duration %q on the page", s)
		}
		d += time.Duration(n) * units[f[len(f)-1]]
	}
	return d
}
