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

// TestIngesterRefusesRequestMetadataOverTheLimits: the ingester itself,
// whatever surface calls it, holds a request's source and target to the
// limits of an item's own: Ingest refuses the whole request before
// reading it, IngestItems rejects the one item whose metadata breaks them.
func TestIngesterRefusesRequestMetadataOverTheLimits(t *testing.T) {
	f := newFixture(t, nil, nil)
	ctx := context.Background()
	long := strings.Repeat("t", crawlkeeper.MaxNameBytes+1)
	body := `{"title":"a","url":"https://a.example/1"}` + "\n" + `{"title":"b","url":"https://a.example/2","_target":"mine"}`
	for _, meta := range []crawlkeeper.Meta{{Target: long, Round: "1"}, {Source: long}, {Source: "caf\xe9"}} {
		sum, err := f.api.Ingester.Ingest(ctx, strings.NewReader(body), meta)
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || sum == nil || sum.Read != 0 {
			t.Fatalf("Ingest with %.20q...: %+v %v, want EINVALID before anything is read", meta, sum, err)
		}
	}
	sum, err := f.api.IngestItems(ctx, []map[string]any{
		{"title": "a", "url": "https://a.example/1"},
		{"title": "b", "url": "https://a.example/2"},
	}, []crawlkeeper.Meta{{Target: long, Round: "1"}, {Target: "fine", Round: "1"}})
	if err != nil || sum.Rejected != 1 || sum.Inserted != 1 || len(sum.Errors) != 1 || sum.Errors[0].Line != 1 ||
		!strings.Contains(sum.Errors[0].Error, "the limit is 1024") {
		t.Fatalf("IngestItems with one target over the limit: %+v %v", sum, err)
	}
	st, err := f.api.Store.Stats(ctx)
	if err != nil || st.Active != 1 {
		t.Fatalf("stored after the refusals: %+v %v, want only the one valid item", st, err)
	}
}
