package main

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"
)

// twoJobs are two items of source jobs without _crawled_at.
const twoJobs = `{"_source":"jobs","title":"Data Engineer","url":"https://jobs.example/1","company":"Acme"}
{"_source":"jobs","title":"SRE","url":"https://jobs.example/2","company":"Globex"}
`

// expectRun runs a command and checks its exit status and that stdout and
// stderr contain (or, prefixed with "!", do not contain) the texts given.
func (c *cli) expectRun(stdin string, args []string, code int, stdout, stderr []string) (string, string) {
	c.t.Helper()
	out, errs, got := c.run(stdin, args...)
	if got != code {
		c.t.Errorf("crawlkeeper %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, errs)
	}
	check := func(stream, text string, wants []string) {
		for _, w := range wants {
			if not, ok := strings.CutPrefix(w, "!"); ok {
				if strings.Contains(text, not) {
					c.t.Errorf("crawlkeeper %s: %s has %q:\n%s", strings.Join(args, " "), stream, not, text)
				}
			} else if !strings.Contains(text, w) {
				c.t.Errorf("crawlkeeper %s: %s lacks %q:\n%s", strings.Join(args, " "), stream, w, text)
			}
		}
	}
	check("stdout", out, stdout)
	check("stderr", errs, stderr)
	return out, errs
}

// TestMessageHistoryNumber: a number is looked up as an id first, and an
// unknown one is reported as the id (and key) that was tried.
func TestMessageHistoryNumber(t *testing.T) {
	c := newCLI(t)
	c.ok(twoJobs, "ingest", "-")
	c.expectRun("", []string{"history", "1"}, 0, []string{`"title":"Data Engineer"`}, nil)
	c.expectRun("", []string{"history", "42"}, 1, nil,
		[]string{`no record with id 42 (and no record with the key "42")`, `!record with key "42" not found`})
}

// TestMessageRestoreUnknownID: restore tells an id no record has from a
// record that is active already.
func TestMessageRestoreUnknownID(t *testing.T) {
	c := newCLI(t)
	c.ok(twoJobs, "ingest", "-")
	c.expectRun("", []string{"restore", "12"}, 1, []string{"1 id does not exist: 12", "!nothing to do"}, []string{"no record was restored"})
	c.expectRun("", []string{"restore", "1", "12", "13"}, 1, []string{"1 record active already (nothing to do): 1", "2 ids do not exist: 12, 13"}, nil)
}

// TestMessageArchiveManualUnknownIDs: a manual archive names the ids it
// was given that no record has, and fails when it archived nothing.
func TestMessageArchiveManualUnknownIDs(t *testing.T) {
	c := newCLI(t)
	c.ok(twoJobs, "ingest", "-")
	c.expectRun("", []string{"archive", "--manual", "--id", "1,99"}, 0, []string{"archived 1 of", "1 id does not exist: 99"}, nil)
	c.expectRun("", []string{"archive", "--manual", "--id", "1"}, 0, []string{"archived 0 of", "1 record archived already (nothing to do): 1", "!does not exist"}, nil)
	c.expectRun("", []string{"archive", "--manual", "--id", "98", "99"}, 1, []string{"2 ids do not exist: 98, 99"}, []string{"no record was archived"})
}

// TestMessageReingestUnchanged: the crawled_at note counts only items
// that were inserted; a re-delivery keeps its record's crawled_at.
func TestMessageReingestUnchanged(t *testing.T) {
	c := newCLI(t)
	c.expectRun(twoJobs, []string{"ingest", "-"}, 0, []string{"2 inserted", "2 items without a readable _crawled_at: crawled_at set to the ingest time"}, nil)
	c.expectRun(twoJobs, []string{"ingest", "-"}, 0, []string{"0 inserted", "2 unchanged", "!_crawled_at"}, nil)
}

// TestMessageFieldsExplained: fields says why it lists nothing: no items
// yet, or no field rare enough, with the threshold and how to watch one.
func TestMessageFieldsExplained(t *testing.T) {
	c := newCLI(t)
	// A store without items (queuing a round creates it; without a store
	// fields fails, see TestReadCommandsNeedAStore).
	c.ok("acme.example\n", "round", "queue", "--round", "1", "-")
	c.expectRun("", []string{"fields"}, 0, []string{"no items ingested yet"}, nil)
	c.ok(twoJobs, "ingest", "-")
	c.expectRun("", []string{"fields"}, 0, []string{"no rare fields: every field of the ingested items is filled in at least 20%", "watch_fields", "!yet"}, nil)
	// A field filled in one item of six is rare and listed.
	c.ok(`{"title":"A","url":"u1","remote":"yes"}
{"title":"B","url":"u2","remote":""}
{"title":"C","url":"u3","remote":""}
{"title":"D","url":"u4","remote":""}
{"title":"E","url":"u5","remote":""}
{"title":"F","url":"u6","remote":""}
`, "ingest", "--source", "board", "-")
	c.expectRun("", []string{"fields"}, 0, []string{"board/remote (rare): filled in 1 of 6 items"}, nil)
}

// TestMessageNoSource: items stored without a source are counted in a
// warning; a default source silences it.
func TestMessageNoSource(t *testing.T) {
	c := newCLI(t)
	items := `{"title":"A","url":"u1"}
{"title":"B","url":"u2"}
{"_source":"jobs","title":"C","url":"u3"}
`
	c.expectRun(items, []string{"ingest", "-"}, 0, []string{"3 inserted"},
		[]string{"warning: 2 items had no source (no _source field and no --source) and were stored under the empty source name"})
	c.expectRun(items, []string{"ingest", "--source", "board", "-"}, 0, []string{"2 inserted"}, []string{"!warning"})
}

// TestHelpOnStdout: help asked for, of the program and of every command
// and subcommand, goes to stdout with exit status 0; a missing command is
// a usage error on stderr.
func TestHelpOnStdout(t *testing.T) {
	c := newCLI(t)
	c.expectRun("", []string{"--help"}, 0, []string{"Usage: crawlkeeper COMMAND", "Commands:"}, nil)
	c.expectRun("", []string{"help"}, 0, []string{"Usage: crawlkeeper COMMAND"}, nil)
	var out, errb bytes.Buffer
	code := Run(context.Background(), nil, strings.NewReader(""), &out, &errb)
	if errs := errb.String(); code != 2 || out.Len() != 0 || !strings.Contains(errs, "Usage: crawlkeeper COMMAND") {
		t.Errorf("no command: exit %d, stderr %q", code, errs)
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	cases := [][]string{{"round", "status", "--help"}, {"round", "-h"}, {"archive", "purge", "--help"}, {"help", "ingest"}}
	for _, n := range names {
		cases = append(cases, []string{n, "--help"}, []string{n, "-h"})
	}
	for _, args := range cases {
		out, errs, code := c.run("", args...)
		if code != 0 || !strings.Contains(out, "Usage: crawlkeeper") || errs != "" {
			t.Errorf("crawlkeeper %s: exit %d\nstdout: %q\nstderr: %q", strings.Join(args, " "), code, out, errs)
		}
	}
}

// TestDoubleDashEndsFlags: after "--" every argument is positional, and
// the flags before it still apply.
func TestDoubleDashEndsFlags(t *testing.T) {
	c := newCLI(t)
	c.ok(twoJobs, "ingest", "-")
	// c.run puts --data last, where "--" would make it an argument.
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{args[0], "--data", c.data}, args[1:]...), strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	for _, tc := range []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"history", "--json", "--", "1"}, 0, `"title":"Data Engineer"`, ""},
		// Without "--" an argument that starts with a dash is a flag; after
		// it, the argument is looked up.
		{[]string{"history", "-5"}, 2, "", "flag provided but not defined: -5"},
		{[]string{"history", "--", "-5"}, 1, "", `no record with id -5 (and no record with the key "-5")`},
		{[]string{"history", "--", "--json"}, 1, "", `"--json"`},
		{[]string{"history", "--", "--help"}, 1, "", `"--help"`},
	} {
		out, errs, code := run(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errs) {
			t.Errorf("crawlkeeper %s: exit %d, want %d with %q on stdout and %q on stderr\nstdout: %s\nstderr: %s",
				strings.Join(tc.args, " "), code, tc.code, tc.out, tc.errs, out, errs)
		}
	}
}
