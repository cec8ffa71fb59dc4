package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestIngestItemsCounted: items ingested inside the process through
// Server.IngestItems (the demo's simulated crawl) are counted on /metrics
// like those posted to the API.
func TestIngestItemsCounted(t *testing.T) {
	f := newFixture(t, nil, nil)
	item := func() map[string]any {
		return map[string]any{"title": "Data Engineer", "url": "https://jobs.example/1"}
	}
	meta := []crawlkeeper.Meta{{Source: "jobs"}}
	for range 2 {
		if _, err := f.api.IngestItems(context.Background(), []map[string]any{item()}, meta); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Get(f.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`crawlkeeper_items_total{outcome="inserted"} 1`, `crawlkeeper_items_total{outcome="unchanged"} 1`} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
