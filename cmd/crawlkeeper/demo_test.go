package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAlertTick(t *testing.T) {
	for _, c := range []struct {
		every time.Duration
		speed float64
		want  time.Duration
	}{
		{time.Minute, 0, time.Minute},
		{time.Minute, 1, time.Minute},
		// The demo's default: an hour of its clock every 5 real seconds.
		{time.Hour, 720, 5 * time.Second},
		{time.Hour, 20, 3 * time.Minute},
	} {
		if got := alertTick(c.every, c.speed); got != c.want {
			t.Errorf("alertTick(%s, %v) = %s, want %s", c.every, c.speed, got, c.want)
		}
	}
}

// startDemo runs `crawlkeeper demo` in process with args and returns its
// URL once it serves; the demo stops at the end of the test.
func startDemo(t *testing.T, c *cli, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"demo", "--addr", "127.0.0.1:0", "--data", c.data}, args...), strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	urls := make(chan string, 1)
	go func() {
		serving := regexp.MustCompile(`serving on (http://\S+?)/?$`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("demo exited with %d", code)
		}
	})
	u, ok := <-urls
	if !ok {
		t.Fatal("the demo stopped before serving")
	}
	return u
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(b)
}

// pageDuration reads a duration as the dashboard prints it ("7d 2h",
// "12m 5s").
func pageDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	units := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}
	var d time.Duration
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f[:len(f)-1])
		if err != nil || units[f[len(f)-1]] == 0 {
			t.Fatalf("duration %q on the page", s)
		}
		d += time.Duration(n) * units[f[len(f)-1]]
	}
	return d
}

// renderedAt reads a page's "Page rendered at" time: the demo's clock.
func renderedAt(t *testing.T, page string) time.Time {
	t.Helper()
	m := regexp.MustCompile(`Page rendered at (\S+ \S+)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no rendering time in %s", page)
	}
	at, err := time.Parse("2006-01-02 15:04:05Z", m[1])
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestDemoReadsOnItsClock runs the demo after a replayed half day and
// reads its pages as the demo's clock runs on: the overview's ingest rate
// covers the replayed past (not the minutes since the first page view),
// and the Alerts page's last evaluation and interval are times of the
// same clock, so the last evaluation is never older than the interval.
func TestDemoReadsOnItsClock(t *testing.T) {
	c := newCLI(t)
	t.Setenv("CRAWLKEEPER_TOKENS", "")
	// At 60 simulated seconds per second the overview's 15-minute window
	// lasts 15 real seconds: the views below fall well inside it.
	base := startDemo(t, c, "--past", "12h", "--speed", "60")

	rate := regexp.MustCompile(`data-k="rate">([0-9.,]+)</span> <small>items/min</small></p><p class="muted">over the last ([^;]+);`)
	first := getPage(t, base+"/")
	// A second view half a simulated minute later, as a visitor
	// reloading the overview: each request takes the clock on.
	deadline := time.Now().Add(time.Minute)
	for start := renderedAt(t, first); ; {
		page := getPage(t, base+"/")
		gap := renderedAt(t, page).Sub(start)
		if gap < 30*time.Second {
			if time.Now().After(deadline) {
				t.Fatalf("the demo's clock did not move for a minute")
			}
			continue
		}
		if gap >= 15*time.Minute {
			t.Fatalf("the second view came %s after the first: past the overview's window, it measures from the first", gap)
		}
		m := rate.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no ingest rate on the overview: %s", page)
		}
		perMin, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if over := pageDuration(t, m[2]); over < 12*time.Hour || perMin <= 0 {
			t.Errorf("overview: %s items/min over the last %s, want a rate over the replayed 12h", m[1], m[2])
		}
		break
	}

	page := getPage(t, base+"/alerts")
	m := regexp.MustCompile(`Rules last evaluated (\S+ \S+) \(([^)]+) ago\), every ([^ ]+(?: [0-9]+[a-z])?) by`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the Alerts page does not say when the rules were evaluated: %s", page)
	}
	ago, every := pageDuration(t, m[2]), pageDuration(t, m[3])
	// A slow evaluation on a busy machine may let the clock run on a
	// little past the interval; two intervals would be another clock.
	if ago > every+every/2 {
		t.Errorf("Alerts page: evaluated %s ago, every %s: the two read on different clocks", m[2], m[3])
	}
}
