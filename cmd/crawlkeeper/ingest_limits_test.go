package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// TestRequestMetadataLimits checks that a request's own source and target
// (?source=, ?target=, --source, --target) are held to the limits of an
// item's _source and _target, on the embedded store and on MariaDB (where
// a 1,500-byte target used to fail the batch half-way with "Data too
// long"): the request is refused whole with a message naming the limit,
// and nothing of it is stored, not even items that carry their own.
func TestRequestMetadataLimits(t *testing.T) {
	for _, kind := range []string{testdb.SQLite, testdb.MySQL} {
		t.Run(kind, func(t *testing.T) {
			c := newCLI(t)
			if kind != testdb.SQLite {
				t.Setenv("CRAWLKEEPER_STORE", testdb.URL(t, kind))
				t.Setenv("CRAWLKEEPER_MONITOR", "")
			}
			t.Setenv("CRAWLKEEPER_TOKENS", "")
			testRequestMetadataLimits(t, c)
		})
	}
}

func testRequestMetadataLimits(t *testing.T, c *cli) {
	base := startServe(t, c)
	long := strings.Repeat("t", 1500)
	atLimit := strings.Repeat("x", crawlkeeper.MaxNameBytes)
	body := `{"title":"Job 1","url":"https://jobs.example/1"}
{"title":"Job 2","url":"https://jobs.example/2","_target":"own-target","_source":"own-source"}
`
	post := func(query string) (int, string) {
		t.Helper()
		res, err := http.Post(base+"/api/v1/items?"+query, "application/x-ndjson", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(res.Body).Decode(&b)
		return res.StatusCode, b.Error.Message
	}
	records := func(query string) int {
		t.Helper()
		var page struct{ Records []map[string]any }
		if code := getJSON(t, base+"/api/v1/records?"+query, &page); code != 200 {
			t.Fatalf("GET records?%s: %d", query, code)
		}
		return len(page.Records)
	}

	for _, tc := range []struct {
		name, query string
		says        []string
	}{
		{"target over the limit", "round=1&target=" + long, []string{"target", "1500 bytes", "the limit is 1024"}},
		{"target one byte over", "round=1&target=" + atLimit + "x", []string{"target", "1025 bytes", "the limit is 1024"}},
		{"source over the limit", "source=" + long, []string{"source", "1500 bytes", "the limit is 1024"}},
		{"source not UTF-8", "source=" + url.QueryEscape("caf\xe9"), []string{"source", "UTF-8"}},
		{"target not UTF-8", "round=1&target=" + url.QueryEscape("\xff\xfe"), []string{"target", "UTF-8"}},
	} {
		code, msg := post(tc.query)
		if code != http.StatusBadRequest {
			t.Fatalf("%s: status %d (%q), want 400", tc.name, code, msg)
		}
		for _, s := range tc.says {
			if !strings.Contains(msg, s) {
				t.Fatalf("%s: message %q does not say %q", tc.name, msg, s)
			}
		}
		if n := records(""); n != 0 {
			t.Fatalf("%s: %d records stored from a refused request", tc.name, n)
		}
	}

	// The CLI refuses the same before it opens the store.
	for _, args := range [][]string{{"--target", long}, {"--source", long}} {
		_, errs, code := c.run(body, append([]string{"ingest", "-"}, args...)...)
		if code != 2 || !strings.Contains(errs, args[0]) || !strings.Contains(errs, "the limit is 1024") {
			t.Fatalf("ingest %s <1500 bytes>: exit %d, %q", args[0], code, errs)
		}
	}
	if n := records(""); n != 0 {
		t.Fatalf("%d records stored by refused commands", n)
	}

	// At the limit everything is stored, and listed by that target: the
	// limit is the one the listings' filter has.
	if code, msg := post("round=1&target=" + atLimit + "&source=" + atLimit); code != 200 {
		t.Fatalf("target and source of exactly %d bytes: %d %q", crawlkeeper.MaxNameBytes, code, msg)
	}
	if n := records("target=" + atLimit); n != 1 {
		t.Fatalf("records with the %d-byte target: %d, want 1", crawlkeeper.MaxNameBytes, n)
	}
	if n := records("source=" + atLimit); n != 1 {
		t.Fatalf("records of the %d-byte source: %d, want 1", crawlkeeper.MaxNameBytes, n)
	}
}
