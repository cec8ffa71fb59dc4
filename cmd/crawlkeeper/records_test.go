package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestRecordsRoundFlags lists records by the round and target of their
// last delivery that carried them, as search filters them.
func TestRecordsRoundFlags(t *testing.T) {
	c := newCLI(t)
	c.ok(strings.Join([]string{
		`{"title":"Job A","url":"https://r.test/a","_source":"jobs","_round":7,"_target":"acme"}`,
		`{"title":"Job B","url":"https://r.test/b","_source":"jobs","_round":"7","_target":"globex"}`,
		`{"title":"News C","url":"https://r.test/c","_source":"news","_round":"7","_target":"acme"}`,
		`{"title":"News D","url":"https://r.test/d","_source":"news"}`,
	}, "\n"), "ingest", "--now", "2026-11-30T10:00:00Z", "-")
	// Round 8 redelivers A from another target and C without one (it
	// keeps acme).
	c.ok(`{"title":"Job A","url":"https://r.test/a","_source":"jobs"}`, "ingest", "--round", "8", "--target", "initech", "--now", "2026-11-30T11:00:00Z", "-")
	c.ok(`{"title":"News C","url":"https://r.test/c","_source":"news","n":1}`, "ingest", "--round", "8", "--now", "2026-11-30T11:00:00Z", "-")
	for _, f := range []struct {
		args []string
		want []string
	}{
		{[]string{"--round", "7"}, []string{"Job B"}},
		{[]string{"--round", "8"}, []string{"Job A", "News C"}},
		{[]string{"--round", "8", "--newest", "--limit", "1"}, []string{"News C"}},
		{[]string{"--target", "acme"}, []string{"News C"}},
		{[]string{"--round", "8", "--target", "initech"}, []string{"Job A"}},
		{[]string{"--round", "8", "--source", "news"}, []string{"News C"}},
		{[]string{"--round", "9"}, nil},
		{[]string{"--round", "8", "--archived"}, nil},
	} {
		var got []string
		for _, r := range decodeLines(t, c.ok("", append([]string{"records"}, f.args...)...)) {
			got = append(got, r["title"].(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(f.want) {
			t.Errorf("records %v: %q, want %q", f.args, got, f.want)
		}
	}
	if _, errs, code := c.run("", "records", "--round", "a\tb"); code != 1 || !strings.Contains(errs, "control characters") {
		t.Errorf("a bad round: exit %d, %q", code, errs)
	}
}
