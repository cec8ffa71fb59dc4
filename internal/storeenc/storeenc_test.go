package storeenc

import (
	"fmt"
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
