package main

import (
	"context"
	"strings"
	"testing"
)

func TestSearchCommand(t *testing.T) {
	c := newCLI(t)
	items := strings.Join([]string{
		`{"title":"Tag der offenen Tür","url":"https://s.test/1","body":"Führungen durch die Universität","_source":"uni"}`,
		`{"title":"Open day at the university","url":"https://s.test/2","body":"Campus tours all day","_source":"uni"}`,
		`{"title":"東京大学のオープンキャンパス","url":"https://s.test/3","_source":"jp"}`,
		`{"title":"Concert in the main hall","url":"https://s.test/4","_source":"events"}`,
	}, "\n")
	c.ok(items, "ingest", "--now", "2026-11-30T10:00:00Z", "-")

	out := c.ok("", "search", "universitat")
	if !strings.Contains(out, "Tag der offenen Tür") || !strings.Contains(out, "«Universität»") || strings.Contains(out, "Open day") {
		t.Errorf("search universitat:\n%s", out)
	}
	out = c.ok("", "search", "univers*", "--source", "uni", "--json")
	hits := decodeLines(t, out)
	if len(hits) != 2 {
		t.Fatalf("prefix search with a source found %d hits:\n%s", len(hits), out)
	}
	if _, ok := hits[0]["snippet"]; !ok {
		t.Errorf("JSON hit without snippet: %v", hits[0])
	}
	if out := c.ok("", "search", "大学"); !strings.Contains(out, "東京大学") {
		t.Errorf("CJK search:\n%s", out)
	}
	if out := c.ok("", "search", "day", "--limit", "1", "--json"); len(decodeLines(t, out)) != 1 {
		t.Errorf("--limit 1 printed:\n%s", out)
	}
	if out := c.ok("", "search", "day -campus"); strings.Contains(out, "Open day") {
		t.Errorf("an excluded word inside the query argument:\n%s", out)
	}
	if out := c.ok("", "search", "day", "--archived"); out != "" {
		t.Errorf("the archive is empty, yet:\n%s", out)
	}
	if _, errs, code := c.run("", "search"); code != 2 || !strings.Contains(errs, "needs a query") {
		t.Errorf("no query: exit %d, %q", code, errs)
	}
	if _, errs, code := c.run("", "search", "--", "-only"); code != 1 || !strings.Contains(errs, "no word to find") {
		t.Errorf("only an exclusion: exit %d, %q", code, errs)
	}

	// Records written before search existed: check reports them, and
	// --reindex indexes them.
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(context.Background(), `UPDATE active SET search_text = NULL`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if out, _, code := c.run("", "check"); code != 1 || !strings.Contains(out, "search_missing") {
		t.Errorf("check after losing the search text: exit %d\n%s", code, out)
	}
	if out := c.ok("", "search", "--reindex"); !strings.Contains(out, "4 records read, 4 rewritten") {
		t.Errorf("reindex: %s", out)
	}
	c.ok("", "check")
	if out := c.ok("", "search", "concert"); !strings.Contains(out, "Concert in the main hall") {
		t.Errorf("after reindex:\n%s", out)
	}
}
