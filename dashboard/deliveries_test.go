package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestOverviewDeliveries checks that the overview shows the store's
// delivery counters and duplicate rate, in total and per source, as the
// API reports them.
func TestOverviewDeliveries(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	var stats crawlkeeper.Stats
	e.call("GET", "/api/v1/stats", "read", "", &stats)
	if stats.Deliveries == 0 || stats.DuplicateDeliveries == 0 {
		t.Fatalf("the seed has no duplicate deliveries: %+v", stats)
	}
	code, body, _ := e.get("/", "")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	for key, want := range map[string]int64{"deliveries": stats.Deliveries, "duplicate_deliveries": stats.DuplicateDeliveries} {
		if got := shown(t, body, key); got != want {
			t.Errorf("%s shown %d, API says %d", key, got, want)
		}
	}
	jobs := stats.Sources["jobs"]
	mustContain(t, "overview", body, fmt.Sprintf(`data-k="duplicate_rate">%.1f%%<`, 100*stats.DuplicateRate),
		fmt.Sprintf(`<td class="n">%d</td><td class="n">%.1f%%</td>`, jobs.Deliveries, 100*jobs.DuplicateRate))
}
