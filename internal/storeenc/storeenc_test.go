package storeenc

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDedupeKeepsLast(t *testing.T) {
	got := Dedupe([]IDVersion{{ID: 1, Version: 1}, {ID: 2, Version: 1}, {ID: 1, Version: 2}}, func(x IDVersion) int64 { return x.ID })
	if fmt.Sprint(got) != "[{2 1} {1 2}]" {
		t.Fatalf("Dedupe = %v", got)
	}
}

func TestMicrosRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 30, 0, 123456000, time.UTC)
	if got := Time(Micros(&at)); got == nil || !got.Equal(at) {
		t.Fatalf("Time(Micros(%v)) = %v", at, got)
	}
	if Micros(nil) != nil || Time(nil) != nil {
		t.Fatal("nil times must stay nil")
	}
}

func TestRedact(t *testing.T) {
	const raw = "postgres://user:s3cret@db:5432/crawl"
	if got := Redact(raw); got != "postgres://user:xxxxx@db:5432/crawl" {
		t.Fatalf("Redact = %q", got)
	}
	if got := RedactErr(fmt.Errorf("dial %s: refused", raw), raw); got != "dial postgres://user:xxxxx@db:5432/crawl: refused" {
		t.Fatalf("RedactErr = %q", got)
	}
}

func TestScratchName(t *testing.T) {
	a, b := ScratchName("Bench run/1"), ScratchName("Bench run/1")
	if a == b {
		t.Fatalf("two scratch names are both %q", a)
	}
	if !regexp.MustCompile(`^ck_scratch_bench_run_1_[0-9a-f]{8}$`).MatchString(a) {
		t.Fatalf("ScratchName = %q", a)
	}
	if long := ScratchName(strings.Repeat("x", 200)); len(long) > 63 {
		t.Fatalf("ScratchName of a long name has %d bytes, above PostgreSQL's 63", len(long))
	}
}
