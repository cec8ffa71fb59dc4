package dashboard

import (
	"testing"
	"time"
)

func TestRateMeter(t *testing.T) {
	t0 := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	m := newRateMeter(t0, 0)
	for _, c := range []struct {
		at        time.Duration
		n         float64
		perMinute float64
		over      time.Duration
	}{
		{0, 0, 0, 0},
		{time.Minute, 60, 60, time.Minute},
		// The sample at 1m is too young to measure from: the average since
		// the start, not "0 items/min over the last minute".
		{2 * time.Minute, 60, 30, 2 * time.Minute},
		// The sample at 2m is the newest one a window old.
		{20 * time.Minute, 960, 50, 18 * time.Minute},
		{26 * time.Minute, 1260, 50, 24 * time.Minute},
		// Now the sample at 20m is.
		{35 * time.Minute, 1860, 60, 15 * time.Minute},
		// No page view for hours: the rate since the last one.
		{5 * time.Hour, 1860, 0, 5*time.Hour - 35*time.Minute},
	} {
		rate, over := m.observe(t0.Add(c.at), c.n)
		if rate != c.perMinute || over != c.over {
			t.Errorf("at %s: %v/min over %s, want %v over %s", c.at, rate, over, c.perMinute, c.over)
		}
	}
	if len(m.samples) != 2 {
		t.Errorf("%d samples kept after a quiet hour, want the one measured from and the newest", len(m.samples))
	}
}

// TestRateMeterAfterReplay is the demo's start: the dashboard starts with
// the replay of a simulated week and is first viewed once it is over;
// views a minute later still measure the week, not the minute since the
// first view.
func TestRateMeterAfterReplay(t *testing.T) {
	t0 := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	m := newRateMeter(t0, 0)
	for _, at := range []time.Duration{week, week + 108*time.Second} {
		rate, over := m.observe(t0.Add(at), 20160)
		if want := 20160 / at.Minutes(); rate != want || over != at {
			t.Errorf("viewed at %s: %v/min over %s, want %v over %s", at, rate, over, want, at)
		}
	}
}

// TestRateMeterBounded: a page viewed all day keeps a bounded number of
// samples, and its rate still covers the window.
func TestRateMeterBounded(t *testing.T) {
	t0 := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	m := newRateMeter(t0, 0)
	var over time.Duration
	for s := time.Duration(0); s <= 24*time.Hour; s += 3 * time.Second {
		_, over = m.observe(t0.Add(s), float64(s/time.Second))
	}
	if max := int(rateWindow/rateSampleEvery) + 2; len(m.samples) > max {
		t.Errorf("%d samples after a day of page views, want at most %d", len(m.samples), max)
	}
	if over < rateWindow || over > rateWindow+rateSampleEvery {
		t.Errorf("rate over %s, want the window (%s) up to one sample spacing more", over, rateWindow)
	}
}

func TestLocalNext(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "/",
		"/records?q=a":         "/records?q=a",
		"//evil.example/":      "/",
		"/\\evil.example":      "/",
		"https://evil.example": "/",
		"records":              "/",
		"/a\r\nSet-Cookie: x":  "/",
	} {
		if got := localNext(in); got != want {
			t.Errorf("localNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[any]string{int64(1234567): "1,234,567", 0: "0", -1234: "-1,234", 12.5: "12.50", 3.0: "3", uint32(1000): "1,000"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0ms", 1500 * time.Millisecond: "1s", 90 * time.Minute: "1h 30m", 49 * time.Hour: "2d 1h", 48*time.Hour + 5*time.Minute: "2d 5m"} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
