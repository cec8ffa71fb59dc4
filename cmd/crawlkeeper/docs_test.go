package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/config"
)

// route is one HTTP route registered in the code.
type route struct {
	pattern string // "GET /api/v1/records/{id}"
	scope   string // ingest, read, admin; empty for the dashboard and health
}

// registeredRoutes reads the routes the HTTP API and the dashboard
// register, from their source: the first argument of every Route,
// Handle and HandleFunc call that is a "METHOD /path" literal, and
// Route's scope.
func registeredRoutes(t *testing.T) []route {
	t.Helper()
	var out []route
	for _, dir := range []string{"../../httpapi", "../../dashboard"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Route" && sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				p, _ := strconv.Unquote(lit.Value)
				if !strings.Contains(p, " ") {
					return true // a catch-all such as "/" or "/api/"
				}
				r := route{pattern: strings.Replace(p, "{$}", "", 1)}
				if sel.Sel.Name == "Route" {
					r.scope = scopeName(call.Args[1])
					if r.scope == "" {
						t.Errorf("%s: cannot read the scope of %s", name, p)
					}
				}
				out = append(out, r)
				return true
			})
		}
	}
	return out
}

// scopeName reads a scope argument: read, ingest, admin (local names) or
// crawlkeeper.ScopeRead and the like.
func scopeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return strings.ToLower(strings.TrimPrefix(e.Name, "Scope"))
	case *ast.SelectorExpr:
		return strings.ToLower(strings.TrimPrefix(e.Sel.Name, "Scope"))
	}
	return ""
}

// TestAPIDocListsEveryRoute fails when an HTTP route is missing from
// docs/API.md, or is listed there with another scope: each route has a
// table row naming it in backquotes, with its scope in the row.
func TestAPIDocListsEveryRoute(t *testing.T) {
	doc, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	routes := registeredRoutes(t)
	if len(routes) < 30 {
		t.Fatalf("found %d routes in httpapi and dashboard; the reading of the source broke", len(routes))
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`").FindAllStringSubmatch(line, -1) {
			pattern, _, _ := strings.Cut(m[1], "?")
			rows[pattern] = line
		}
	}
	for _, r := range routes {
		row, ok := rows[r.pattern]
		if !ok {
			t.Errorf("docs/API.md has no table row for %s: add one (scope, what it does, a curl example)", r.pattern)
			continue
		}
		if r.scope != "" && !strings.Contains(row, "| "+r.scope+" |") {
			t.Errorf("docs/API.md's row for %s does not give its scope %q in a cell of its own", r.pattern, r.scope)
		}
	}
	// Each API route has a curl example: a line that calls it with the
	// route's method, on a URL written "$B/api/v1/...".
	var curls []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "curl ") {
			curls = append(curls, line)
		}
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r.pattern, " ")
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		url := regexp.MustCompile(`"\$B` + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/?"]+`) + `[?"]`)
		found := false
		for _, c := range curls {
			post := strings.Contains(c, "-X POST") || strings.Contains(c, " -d ") || strings.Contains(c, "--data")
			if url.MatchString(c) && post == (method == "POST") {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/API.md has no curl example of %s", r.pattern)
		}
	}
	// The reverse: a documented route that the code does not register.
	known := map[string]bool{}
	for _, r := range routes {
		known[r.pattern] = true
	}
	for p := range rows {
		if !known[p] {
			t.Errorf("docs/API.md lists %s, which no code registers", p)
		}
	}
}

// TestDocLinks checks the relative links of README.md and docs/*.md: the
// file exists, and a #fragment names a heading of the Markdown file.
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(stripCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			full := file
			if path != "" {
				full = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(full); err != nil {
					t.Errorf("%s links to %s, which does not exist", filepath.Base(file), target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(full, ".md") {
				md, err := os.ReadFile(full)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(headingAnchors(string(md)), frag) {
					t.Errorf("%s links to %s: %s has no heading with that anchor", filepath.Base(file), target, filepath.Base(full))
				}
			}
		}
	}
}

// stripCode removes fenced code blocks, whose brackets are not links.
func stripCode(md string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives a file's headings:
// lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(md string) []string {
	var out []string
	for _, line := range strings.Split(stripCode(md), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestDocConfigsParse reads every YAML block of README.md and the docs that
// show crawlkeeper configurations, as crawlkeeper reads --config: a
// recipe or an example with a misspelt key fails here, not for the reader.
func TestDocConfigsParse(t *testing.T) {
	files := []string{"../../README.md"}
	for _, f := range []string{"CONFIG.md", "RECIPES.md", "GUIDE.md", "MONITOR.md", "STORES.md", "KEYS.md", "API.md"} {
		files = append(files, "../../docs/"+f)
	}
	blocks := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var block strings.Builder
		in := false
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case !in && line == "```yaml":
				in = true
				block.Reset()
			case in && line == "```":
				in = false
				blocks++
				if _, err := config.Parse([]byte(block.String())); err != nil {
					t.Errorf("%s: a YAML block does not parse as a configuration: %v\n%s", filepath.Base(file), err, block.String())
				}
			case in:
				block.WriteString(line + "\n")
			}
		}
	}
	if blocks < 8 {
		t.Errorf("found %d YAML blocks; the recipes alone have more", blocks)
	}
}

// TestAPIDocMetricsExist checks that every metric name the Metrics section
// of docs/API.md mentions is one package metrics registers.
func TestAPIDocMetricsExist(t *testing.T) {
	doc, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/API.md has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var src strings.Builder
	files, _ := filepath.Glob("../../metrics/*.go")
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	names := regexp.MustCompile("`(crawlkeeper_[a-z_]+)`").FindAllStringSubmatch(section, -1)
	if len(names) < 5 {
		t.Fatalf("found %d metric names in docs/API.md's Metrics section", len(names))
	}
	for _, m := range names {
		if !strings.Contains(src.String(), `"`+m[1]+`"`) {
			t.Errorf("docs/API.md names the metric %s, which package metrics does not register", m[1])
		}
	}
}

// recipe returns the YAML block under the "## name" heading of
// docs/RECIPES.md, written to a file for --config.
func recipe(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/RECIPES.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n## "+name+"\n")
	if !ok {
		t.Fatalf("docs/RECIPES.md has no section %q", name)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatalf("docs/RECIPES.md: no YAML block under %q", name)
	}
	block, _, _ := strings.Cut(rest, "```")
	path := filepath.Join(t.TempDir(), "recipe.yaml")
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ingestSummary ingests items (JSON lines) and returns the summary.
func (c *cli) ingestSummary(items string, args ...string) map[string]any {
	c.t.Helper()
	out := c.ok(items, append([]string{"ingest", "--json", "-"}, args...)...)
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		c.t.Fatalf("ingest summary %q: %v", out, err)
	}
	return sum
}

// TestRecipes ingests the deliveries that docs/RECIPES.md describes, once
// on the defaults and once under the recipe's configuration, and checks
// the outcomes the page states.
func TestRecipes(t *testing.T) {
	counts := func(sum map[string]any) string {
		return fmt.Sprintf("inserted %v, changed %v, unchanged %v", sum["inserted"], sum["changed"], sum["unchanged"])
	}
	t.Run("news: a headline edit and a relative date", func(t *testing.T) {
		first := `{"_source":"news.example","title":"Mayor resigns","url":"https://news.example/2026/12/4711","published":"2 hours ago","body":"The mayor resigned on Tuesday."}`
		edited := `{"_source":"news.example","title":"Mayor resigns after budget vote","url":"https://news.example/2026/12/4711","published":"2 hours ago","body":"The mayor resigned on Tuesday."}`
		later := `{"_source":"news.example","title":"Mayor resigns after budget vote","url":"https://news.example/2026/12/4711","published":"5 hours ago","body":"The mayor resigned on Tuesday."}`
		def := newCLI(t)
		def.ingestSummary(first)
		if got := counts(def.ingestSummary(edited)); got != "inserted 1, changed 0, unchanged 0" {
			t.Errorf("defaults, headline edited: %s; want a second record", got)
		}
		if got := counts(def.ingestSummary(later)); got != "inserted 0, changed 1, unchanged 0" {
			t.Errorf("defaults, published 2 → 5 hours ago: %s; want a new version", got)
		}
		cfg := recipe(t, "News")
		rc := newCLI(t)
		rc.ingestSummary(first, "--config", cfg)
		if got := counts(rc.ingestSummary(edited, "--config", cfg)); got != "inserted 0, changed 1, unchanged 0" {
			t.Errorf("recipe, headline edited: %s; want a change of the one record", got)
		}
		if got := counts(rc.ingestSummary(later, "--config", cfg)); got != "inserted 0, changed 0, unchanged 1" {
			t.Errorf("recipe, published 2 → 5 hours ago: %s; want no change", got)
		}
		if out := rc.ok("", "history", "1", "--config", cfg); strings.Count(out, "\n") != 2 || !strings.Contains(out, `"title":"Mayor resigns"`) {
			t.Errorf("recipe: the history of the article does not keep the first headline:\n%s", out)
		}
	})
	t.Run("jobs: deadlines, relative dates", func(t *testing.T) {
		cfg := recipe(t, "Jobs")
		c := newCLI(t)
		sum := c.ingestSummary(`{"_source":"jobs.example","title":"Data Engineer","url":"https://jobs.example/1","deadline":"31.12.2026","posted":"3 days ago"}
{"_source":"jobs.example","title":"Analyst","url":"https://jobs.example/2","apply_by":"31 Dezember 2026"}
{"_source":"jobs.example","title":"Tester","url":"https://jobs.example/3","deadline":"open until filled"}`, "--config", cfg)
		if sum["date_errors"] != float64(1) {
			t.Errorf("date errors %v, want 1 (open until filled)", sum["date_errors"])
		}
		recs := c.ok("", "records", "--config", cfg)
		for _, id := range []string{`"id":1,`, `"id":2,`} {
			i := strings.Index(recs, id)
			if i < 0 || !strings.Contains(recs[i:], `"event_at":"2026-12-31T23:00:00Z"`) {
				t.Errorf("record %s: the deadline is not the end of 31 December in Berlin:\n%s", id, recs)
			}
		}
		if got := counts(c.ingestSummary(`{"_source":"jobs.example","title":"Data Engineer","url":"https://jobs.example/1","deadline":"31.12.2026","posted":"4 days ago"}`, "--config", cfg)); got != "inserted 0, changed 0, unchanged 1" {
			t.Errorf("posted 3 → 4 days ago: %s; want no change", got)
		}
	})
	t.Run("events: a range lasts until its end", func(t *testing.T) {
		item := `{"_source":"events.example","title":"Festival","url":"https://events.example/e/1","event_date":"15–17 May 2027"}`
		cfg := recipe(t, "Events")
		for _, c := range []struct {
			name, cfg, eventAt string
			// archived says what a pass moves at each time.
			archived map[string]string
		}{
			{"defaults", "", "2027-05-16T00:00:00Z", map[string]string{
				"2027-05-14T00:00:00Z": "(event 0, stale 0, age 1, manual 0)", // announced more than 30 days ago
			}},
			{"recipe", cfg, "2027-05-17T22:00:00Z", map[string]string{
				"2027-05-14T00:00:00Z": "would archive 0 of",
				"2027-05-18T03:00:00Z": "would archive 0 of", // 6 hours of grace
				"2027-05-18T05:00:00Z": "(event 1, stale 0, age 0, manual 0)",
			}},
		} {
			cl := newCLI(t)
			args := []string{}
			if c.cfg != "" {
				args = append(args, "--config", c.cfg)
			}
			// Announced in March, delivered again by each crawl since.
			cl.ingestSummary(item, append(args, "--now", "2027-03-01T00:00:00Z")...)
			cl.ingestSummary(item, append(args, "--now", "2027-05-10T00:00:00Z")...)
			if out := cl.ok("", append([]string{"records"}, args...)...); !strings.Contains(out, `"event_at":"`+c.eventAt+`"`) {
				t.Errorf("%s: event_at is not %s:\n%s", c.name, c.eventAt, out)
			}
			for now, want := range c.archived {
				if out := cl.ok("", append([]string{"archive", "--dry-run", "--now", now}, args...)...); !strings.Contains(out, want) {
					t.Errorf("%s: archive at %s: want %q:\n%s", c.name, now, want, out)
				}
			}
		}
	})
	t.Run("products: a price change is a version", func(t *testing.T) {
		first := `{"_source":"shop.example","sku":"EM-249","name":"Espresso machine","price":"249.00","review_count":12}`
		cheaper := `{"_source":"shop.example","sku":"EM-249","name":"Espresso machine","price":"229.00","review_count":15}`
		def := newCLI(t)
		def.ingestSummary(first)
		if got := counts(def.ingestSummary(cheaper)); got != "inserted 1, changed 0, unchanged 0" {
			t.Errorf("defaults, price changed: %s; want a new record (the key is a hash with the price)", got)
		}
		cfg := recipe(t, "Products")
		c := newCLI(t)
		c.ingestSummary(first, "--config", cfg)
		if got := counts(c.ingestSummary(cheaper, "--config", cfg)); got != "inserted 0, changed 1, unchanged 0" {
			t.Errorf("recipe, price changed: %s; want a new version", got)
		}
		if got := counts(c.ingestSummary(strings.Replace(cheaper, "15", "16", 1), "--config", cfg)); got != "inserted 0, changed 0, unchanged 1" {
			t.Errorf("recipe, review count changed: %s; want no change", got)
		}
	})
}
