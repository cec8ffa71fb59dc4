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
		// No sample inside the window is old enough: the average since
		// the start.
		{30 * time.Minute, 360, 12, 30 * time.Minute},
		// The sample at 30m is inside the window now.
		{40 * time.Minute, 460, 10, 10 * time.Minute},
		// Samples older than an hour are gone: the average since the start.
		{3 * time.Hour, 540, 3, 3 * time.Hour},
	} {
		rate, over := m.observe(t0.Add(c.at), c.n)
		if rate != c.perMinute || over != c.over {
			t.Errorf("at %s: %v/min over %s, want %v over %s", c.at, rate, over, c.perMinute, c.over)
		}
	}
	if len(m.samples) > 2 {
		t.Errorf("samples older than an hour kept: %d", len(m.samples))
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
