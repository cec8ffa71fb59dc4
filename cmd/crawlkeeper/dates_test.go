package main

import (
	"strings"
	"testing"
)

func TestDatesCommand(t *testing.T) {
	c := newCLI(t)
	out := c.ok("", "dates", "--json", "--now", "2025-05-20T10:00:00Z", "--tz", "Asia/Tokyo", "2024年5月15日 10時30分", "yesterday", "N/A")
	lines := decodeLines(t, out)
	if len(lines) != 3 {
		t.Fatalf("got %d lines: %s", len(lines), out)
	}
	if lines[0]["time"] != "2024-05-15T10:30:00+09:00" || lines[0]["error"] != nil {
		t.Errorf("CJK date: %v", lines[0])
	}
	if lines[1]["time"] != "2025-05-19T00:00:00+09:00" {
		t.Errorf("yesterday in Tokyo: %v", lines[1])
	}
	if lines[2]["time"] != nil || !strings.Contains(lines[2]["error"].(string), "N/A") {
		t.Errorf("junk: %v", lines[2])
	}
	// One per line from standard input, with a day-first order.
	out = c.ok("03/04/2025\n04/03/2025\n", "dates", "--json", "--order", "MDY")
	lines = decodeLines(t, out)
	if lines[0]["time"] != "2025-03-04T00:00:00Z" || lines[1]["time"] != "2025-04-03T00:00:00Z" {
		t.Errorf("MDY from stdin: %v", lines)
	}
	// A weekday alone is the last such day, or the next with --upcoming
	// (as ingest reads deadlines). 2025-05-20 is a Tuesday.
	out = c.ok("", "dates", "--json", "--now", "2025-05-20T10:00:00Z", "Friday")
	if l := decodeLines(t, out); l[0]["time"] != "2025-05-16T00:00:00Z" {
		t.Errorf("Friday: %v", l)
	}
	out = c.ok("", "dates", "--json", "--upcoming", "--now", "2025-05-20T10:00:00Z", "Friday")
	if l := decodeLines(t, out); l[0]["time"] != "2025-05-23T00:00:00Z" {
		t.Errorf("Friday, upcoming: %v", l)
	}
	if _, errs, code := c.run("", "dates", "--order", "XYZ", "x"); code != 2 || !strings.Contains(errs, "XYZ") {
		t.Errorf("bad order: %d %s", code, errs)
	}
}
