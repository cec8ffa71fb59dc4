package metrics_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/metrics"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDeliveries checks that /metrics exports the store's delivery
// counters per source, as counters, read from the store: a second process
// (a second Metrics) reports the same totals.
func TestDeliveries(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Now: func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }}
	for _, items := range []string{
		`{"title":"A","url":"https://m.example/a"}` + "\n" + `{"title":"B","url":"https://m.example/b"}`,
		`{"title":"A","url":"https://m.example/a/"}`,
	} {
		if _, err := g.Ingest(ctx, strings.NewReader(items), crawlkeeper.Meta{Source: "jobs"}); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP crawlkeeper_deliveries_total Items delivered to the store, by source, since the store was created (persistent; read from the store).
# TYPE crawlkeeper_deliveries_total counter
crawlkeeper_deliveries_total{source="jobs"} 3
# HELP crawlkeeper_duplicate_deliveries_total Delivered items that went to a record the store already held (re-crawls merged instead of stored twice), by source (persistent; read from the store).
# TYPE crawlkeeper_duplicate_deliveries_total counter
crawlkeeper_duplicate_deliveries_total{source="jobs"} 1
`
	for range 2 {
		m := metrics.New()
		if err := m.RefreshStore(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "crawlkeeper_deliveries_total", "crawlkeeper_duplicate_deliveries_total"); err != nil {
			t.Fatal(err)
		}
	}
}
