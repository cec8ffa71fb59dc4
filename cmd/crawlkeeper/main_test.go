package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cli runs crawlkeeper in process against one data folder.
type cli struct {
	t    *testing.T
	data string
}

func newCLI(t *testing.T) *cli {
	t.Setenv("CRAWLKEEPER_CONFIG", "")
	t.Setenv("CRAWLKEEPER_STORE", "")
	t.Setenv("CRAWLKEEPER_DATA", "")
	return &cli{t: t, data: t.TempDir()}
}

// run returns stdout, stderr and the exit status.
func (c *cli) run(stdin string, args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	// --data goes last, or before a "--", after which it would be an
	// argument.
	if i := slices.Index(args, "--"); i >= 0 {
		args = slices.Concat(args[:i], []string{"--data", c.data}, args[i:])
	} else {
		args = append(args[:len(args):len(args)], "--data", c.data)
	}
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(stdin string, args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("crawlkeeper %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func decodeLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestIngestRecordsHistoryStatsCheck(t *testing.T) {
	c := newCLI(t)
	sample, err := os.ReadFile(filepath.Join("..", "..", "examples", "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := c.ok(string(sample), "ingest", "--json", "--now", "2026-11-30T10:00:00Z", "-")
	var sum map[string]any
	json.Unmarshal([]byte(out), &sum)
	for k, want := range map[string]float64{"read": 12, "inserted": 8, "unchanged": 1, "rejected": 3, "changed": 0, "revived": 0} {
		if sum[k] != want {
			t.Errorf("summary %s = %v, want %v (%s)", k, sum[k], want, out)
		}
	}
	errs := sum["errors"].([]any)
	if len(errs) != 3 || errs[0].(map[string]any)["line"] != float64(10) {
		t.Fatalf("errors = %v", errs)
	}
	// Date errors name the field, so that an operator knows which
	// selector broke.
	if de, _ := sum["date_error_list"].([]any); len(de) != 1 || de[0].(map[string]any)["line"] != float64(8) ||
		de[0].(map[string]any)["error"] != `closing_date: cannot read "soon"` {
		t.Fatalf("date_error_list = %v", sum["date_error_list"])
	}

	// Re-ingesting the file changes nothing but last_updated_at.
	out = c.ok(string(sample), "ingest", "--json", "--now", "2026-12-01T10:00:00Z", "-")
	json.Unmarshal([]byte(out), &sum)
	if sum["inserted"] != float64(0) || sum["unchanged"] != float64(9) {
		t.Fatalf("second ingest: %s", out)
	}

	// One changed item, from a file given by path, with flag metadata.
	path := filepath.Join(t.TempDir(), "change.jsonl")
	os.WriteFile(path, []byte(`{"title":"Data Engineer","url":"https://jobs.example/acme/data-engineer","company":"Acme","location":"Hamburg","salary":"72000 EUR","deadline":"2026-12-31"}`+"\n"), 0o644)
	out = c.ok("", "ingest", path, "--source", "jobs.example", "--json", "--now", "2026-12-02T10:00:00Z")
	json.Unmarshal([]byte(out), &sum)
	if sum["changed"] != float64(1) {
		t.Fatalf("change ingest: %s", out)
	}

	recs := decodeLines(t, c.ok("", "records", "--source", "jobs.example"))
	if len(recs) != 3 {
		t.Fatalf("%d jobs records, want 3", len(recs))
	}
	first := recs[0]
	if first["crawled_at"] != "2026-11-30T10:00:00Z" || first["last_updated_at"] != "2026-12-02T10:00:00Z" || first["version"] != float64(2) {
		t.Fatalf("record = %v", first)
	}
	if first["item"].(map[string]any)["location"] != "Hamburg" || first["event_at"] != "2027-01-01T00:00:00Z" {
		t.Fatalf("record item/event_at = %v / %v", first["item"], first["event_at"])
	}
	for _, f := range []string{"id", "key", "key_parts", "source", "title", "url", "item", "crawled_at", "last_updated_at", "last_changed_at", "version", "event_at", "processed_at", "processed_version", "derived"} {
		if _, ok := first[f]; !ok {
			t.Errorf("records output lacks %q", f)
		}
	}
	if n := len(decodeLines(t, c.ok("", "records", "--limit", "2"))); n != 2 {
		t.Fatalf("--limit 2 printed %d", n)
	}

	hist := decodeLines(t, c.ok("", "history", first["key"].(string)))
	if len(hist) != 2 || hist[0]["version"] != float64(1) || hist[1]["current"] != true || hist[0]["item"].(map[string]any)["location"] != "Berlin" {
		t.Fatalf("history = %v", hist)
	}
	byID := c.ok("", "history", "1")
	if len(decodeLines(t, byID)) != 2 {
		t.Fatalf("history by id: %s", byID)
	}

	var st map[string]any
	json.Unmarshal([]byte(c.ok("", "stats", "--json")), &st)
	if st["active"] != float64(8) || st["archived"] != float64(0) || st["history"] != float64(1) || st["date_errors"] != float64(1) {
		t.Fatalf("stats = %v", st)
	}
	if src := st["sources"].(map[string]any)["jobs.example"].(map[string]any); src["active"] != float64(3) {
		t.Fatalf("source stats = %v", src)
	}
	if src := st["sources"].(map[string]any)["events.example"].(map[string]any); fmt.Sprint(src["date_error_samples"]) != `[closing_date: cannot read "soon"]` {
		t.Fatalf("events.example date error samples = %v", src["date_error_samples"])
	}
	if out := c.ok("", "stats"); !strings.Contains(out, `closing_date: cannot read "soon"`) {
		t.Fatalf("stats does not name the date error's field:\n%s", out)
	}

	var chk map[string]any
	json.Unmarshal([]byte(c.ok("", "check", "--json")), &chk)
	if chk["ok"] != true {
		t.Fatalf("check = %v", chk)
	}
}

func TestUsageErrors(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"ingest"}, 2, "needs exactly one FILE"},
		{[]string{"ingest", "-", "--now", "yesterday"}, 2, "--now"},
		{[]string{"ingest", "-", "--round", ""}, 0, ""},
		{[]string{"records", "--bogus"}, 2, "bogus"},
		{[]string{"ingest", "/does/not/exist.jsonl"}, 1, "open input"},
		{[]string{"stats", "--store", "ftp://x"}, 1, `unknown store scheme "ftp"`},
		{[]string{"history", "424242"}, 1, `no record with id 424242 (and no record with the key "424242")`},
	} {
		_, errs, code := c.run("", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("crawlkeeper %v: exit %d stderr %q; want exit %d with %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

func TestCheckReportsViolations(t *testing.T) {
	c := newCLI(t)
	c.ok(`{"title":"a","url":"https://v.test/a"}`, "ingest", "-")
	// Break an invariant behind the store's back: the same key archived too.
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`INSERT INTO archive SELECT id + 100, key, key_parts, source, title, url, item, length(item), content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived, 0, 'manual', search_text, last_round, last_target, fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log FROM active`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, _, code := c.run("", "check", "--json")
	if code != 1 {
		t.Fatalf("check exit %d on a broken store", code)
	}
	var chk struct {
		OK         bool `json:"ok"`
		Violations []struct{ Kind string }
	}
	json.Unmarshal([]byte(out), &chk)
	kinds := map[string]bool{}
	for _, v := range chk.Violations {
		kinds[v.Kind] = true
	}
	if chk.OK || !kinds["key_in_both"] || !kinds["id_counter"] {
		t.Fatalf("check = %s", out)
	}
}
