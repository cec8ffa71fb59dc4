package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// TestServerStoresStandAlone runs the README's commands against a fresh
// PostgreSQL schema, MariaDB/MySQL database and MongoDB database with
// --store alone (no --monitor): the crawl monitor lives in the store.
func TestServerStoresStandAlone(t *testing.T) {
	for _, kind := range []string{testdb.Postgres, testdb.MySQL, testdb.MongoDB} {
		t.Run(kind, func(t *testing.T) {
			c := newCLI(t)
			t.Setenv("CRAWLKEEPER_STORE", testdb.URL(t, kind))
			t.Setenv("CRAWLKEEPER_MONITOR", "")
			t.Setenv("CRAWLKEEPER_TOKENS", "")
			testStandAlone(t, c)
		})
	}
}

func testStandAlone(t *testing.T, c *cli) {
	cfg := writeConfig(t, "sources:\n  jobs:\n    watch_fields: [salary]\n")
	c.ok("acme.example\nbeta.example\ngamma.example\n", "round", "queue", "--round", "7", "-", "--config", cfg, "--now", "2026-03-01T10:00:00Z")
	items := `{"title":"Job 1","url":"https://jobs.example/1","salary":"50k","deadline":"2026-03-10"}
{"title":"Job 2","url":"https://jobs.example/2","salary":"","_target":"beta.example"}
`
	var sum map[string]any
	if err := json.Unmarshal([]byte(c.ok(items, "ingest", "-", "--source", "jobs", "--round", "7", "--target", "acme.example",
		"--json", "--config", cfg, "--now", "2026-03-01T10:05:00Z")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum["inserted"] != 2.0 || sum["marked"] != 2.0 {
		t.Fatalf("ingest summary = %v", sum)
	}
	var st struct{ Queued, Done, Remaining int }
	json.Unmarshal([]byte(c.ok("", "round", "status", "--round", "7", "--json", "--config", cfg)), &st)
	if st.Queued != 3 || st.Done != 2 || st.Remaining != 1 {
		t.Fatalf("round status = %+v", st)
	}
	if out := c.ok("", "round", "remaining", "--round", "7", "--config", cfg); out != "gamma.example\n" {
		t.Fatalf("round remaining = %q", out)
	}
	var fields []map[string]any
	json.Unmarshal([]byte(c.ok("", "fields", "--source", "jobs", "--json", "--config", cfg)), &fields)
	if len(fields) != 1 || fields[0]["field"] != "salary" || fields[0]["filled"] != 1.0 {
		t.Fatalf("fields = %v", fields)
	}
	var scan map[string]any
	json.Unmarshal([]byte(c.ok("", "scan", "--once", "--json", "--config", cfg, "--now", "2026-03-01T11:00:00Z")), &scan)
	if scan["processed"] != 2.0 {
		t.Fatalf("scan --once = %v", scan)
	}
	// Job 1's deadline passed: the event rule archives it.
	var rep map[string]any
	json.Unmarshal([]byte(c.ok("", "archive", "--json", "--config", cfg, "--now", "2026-03-12T00:00:00Z")), &rep)
	if rep["archived"] != 1.0 {
		t.Fatalf("archive = %v", rep)
	}
	if out := c.ok("", "check", "--config", cfg); !strings.Contains(out, "ok: every invariant holds") {
		t.Fatalf("check = %q", out)
	}

	// serve answers the rounds page and takes marks through its API.
	base := startServe(t, c, "--config", cfg)
	res, err := http.Post(base+"/api/v1/items?source=jobs&round=7&target=gamma.example", "application/x-ndjson",
		strings.NewReader(`{"title":"Job 3","url":"https://jobs.example/3"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("POST items: %d", res.StatusCode)
	}
	res, err = http.Get(base + "/rounds")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `data-round="7"`) {
		t.Fatalf("GET /rounds: %d\n%s", res.StatusCode, b)
	}
	json.Unmarshal([]byte(c.ok("", "round", "status", "--round", "7", "--json", "--config", cfg)), &st)
	if st.Done != 3 || st.Remaining != 0 {
		t.Fatalf("round status after serve's ingest = %+v", st)
	}
}
