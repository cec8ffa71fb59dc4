package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/dashboard"
)

// TestServeDashboard checks that serve mounts the dashboard with its
// monitor and pipeline: the overview, the rounds and pipeline pages answer
// from the running process, under the dashboard's security policy.
func TestServeDashboard(t *testing.T) {
	c := newCLI(t)
	t.Setenv("CRAWLKEEPER_TOKENS", "")
	base := startServe(t, c)
	res, err := http.Post(base+"/api/v1/items?source=jobs&round=1&target=acme", "application/x-ndjson",
		strings.NewReader(`{"title":"Data Engineer","url":"https://jobs.example/1"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for path, want := range map[string]string{
		"/":          `data-k="active">1<`,
		"/rounds":    `data-round="1"`,
		"/pipeline":  `data-k="active">1<`,
		"/records/1": "Data Engineer",
		"/alerts":    `id="no-rules"`,
	} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, want %q in %s", path, res.StatusCode, want, b)
		}
		if res.Header.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", path, res.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestDemoFlags: the demo refuses a simulated past it cannot read before
// it starts anything.
func TestDemoFlags(t *testing.T) {
	c := newCLI(t)
	for _, past := range []string{"a week", "-1d"} {
		_, errs, code := c.run("", "demo", "--past", past)
		if code != 2 || !strings.Contains(errs, "--past") {
			t.Errorf("demo --past %q: exit %d, %s", past, code, errs)
		}
	}
}
