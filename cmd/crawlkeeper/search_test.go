package main

import (
	"context"
	"sort"
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

	// Round and target filters: the round and target of each record's
	// last delivery that carried them.
	rounds := strings.Join([]string{
		`{"title":"Concert in the main hall","url":"https://s.test/4","_source":"events","_round":7,"_target":"hall"}`,
		`{"title":"Open day at the university","url":"https://s.test/2","body":"Campus tours all day","_source":"uni","_round":"7"}`,
	}, "\n")
	c.ok(rounds, "ingest", "--now", "2026-11-30T11:00:00Z", "-")
	c.ok(`{"title":"Open day at the university","url":"https://s.test/2","body":"Campus tours all day","_source":"uni"}`, "ingest", "--now", "2026-11-30T12:00:00Z", "--target", "uni-site", "-")
	hits = decodeLines(t, c.ok("", "search", "concert day", "--round", "7", "--json"))
	if len(hits) != 0 {
		t.Errorf("concert day in round 7 (no record has both words): %v", hits)
	}
	for _, f := range []struct {
		args []string
		want []string
	}{
		{[]string{"--round", "7"}, []string{"Concert in the main hall", "Open day at the university"}},
		{[]string{"--round", "7", "--target", "hall"}, []string{"Concert in the main hall"}},
		{[]string{"--target", "uni-site"}, []string{"Open day at the university"}},
		{[]string{"--round", "8"}, nil},
	} {
		var got []string
		for _, h := range decodeLines(t, c.ok("", append([]string{"search", "the", "--json"}, f.args...)...)) {
			got = append(got, h["record"].(map[string]any)["title"].(string))
		}
		sort.Strings(got)
		if strings.Join(got, "|") != strings.Join(f.want, "|") {
			t.Errorf("search %v: %v, want %v", f.args, got, f.want)
		}
	}
	out = c.ok("", "search", "concert", "--round", "7", "--json")
	if hits := decodeLines(t, out); len(hits) != 1 || hits[0]["record"].(map[string]any)["last_round"] != "7" || hits[0]["record"].(map[string]any)["last_target"] != "hall" {
		t.Errorf("the JSON hit does not show the round and target:\n%s", out)
	}
	if _, errs, code := c.run("", "search", "concert", "--round", "a\tb"); code != 1 || !strings.Contains(errs, "control characters") {
		t.Errorf("a bad round: exit %d, %q", code, errs)
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
