package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
)

func readExport(t *testing.T, path string) []map[string]any {
	t.Helper()
	r, err := jsonlz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExport(t *testing.T) {
	c := newCLI(t)
	c.ok(`{"title":"A","url":"https://a.example/1","v":1}
{"title":"B","url":"https://a.example/2"}
{"title":"C","url":"https://b.example/3","_source":"b"}`, "ingest", "--source", "a", "--now", "2026-01-01T00:00:00Z", "-")
	c.ok(`{"title":"A","url":"https://a.example/1","v":2}`, "ingest", "--source", "a", "--now", "2026-01-02T00:00:00Z", "-")
	c.ok("", "archive", "--manual", "--id", "2", "--now", "2026-01-03T00:00:00Z")
	dir := t.TempDir()

	t.Run("active with history, compressed", func(t *testing.T) {
		path := filepath.Join(dir, "active.jsonl.zst")
		out := c.ok("", "export", "--history", path)
		if !strings.Contains(out, "exported 2 records with 1 earlier version") {
			t.Fatalf("output %q", out)
		}
		lines := readExport(t, path)
		if len(lines) != 2 {
			t.Fatalf("%d lines", len(lines))
		}
		rec := lines[0]["record"].(map[string]any)
		hist := lines[0]["history"].([]any)
		if rec["title"] != "A" || rec["version"] != float64(2) || len(hist) != 1 || !strings.Contains(string(mustJSON(hist[0])), `"v":1`) {
			t.Fatalf("first line %v", lines[0])
		}
	})
	t.Run("all, by source", func(t *testing.T) {
		path := filepath.Join(dir, "a.jsonl")
		out := c.ok("", "export", "--all", "--source", "a", "--json", path)
		var rep exportReport
		json.Unmarshal([]byte(out), &rep)
		if rep.Active != 1 || rep.Archived != 1 {
			t.Fatalf("report %s", out)
		}
		lines := readExport(t, path)
		if len(lines) != 2 || lines[0]["title"] != "A" || lines[1]["archive_reason"] != "manual" {
			t.Fatalf("lines %v", lines)
		}
	})
	t.Run("since", func(t *testing.T) {
		path := filepath.Join(dir, "since.jsonl")
		c.ok("", "export", "--since", "2026-01-01T12:00:00Z", path)
		if lines := readExport(t, path); len(lines) != 1 || lines[0]["title"] != "A" {
			t.Fatalf("lines %v", lines)
		}
	})
	t.Run("mistakes", func(t *testing.T) {
		existing := filepath.Join(dir, "a.jsonl")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"export", existing}, "exists"},
			{[]string{"export", filepath.Join(dir, "x.csv")}, "name it FILE.jsonl"},
			{[]string{"export"}, "exactly one FILE"},
			{[]string{"export", "--since", "yesterday", filepath.Join(dir, "y.jsonl")}, "RFC 3339"},
		} {
			_, errs, code := c.run("", tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("%v: exit %d, %s", tc.args, code, errs)
			}
		}
		c.ok("", "export", "--overwrite", existing)
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
