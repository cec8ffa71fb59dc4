package httpapi_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestStatsDeliveries checks that the stats endpoint reports the delivery
// counters per source and the duplicate rate.
func TestStatsDeliveries(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.do("POST", "/api/v1/items?source=jobs", "", `[{"title":"A","url":"https://x.test/a"},{"title":"B","url":"https://x.test/b"}]`, nil)
	f.do("POST", "/api/v1/items?source=jobs", "", `[{"title":"a","url":"https://x.test/a?utm_source=x"},{"title":"B","url":"https://x.test/b/"}]`, nil)
	var st crawlkeeper.Stats
	if code := f.do("GET", "/api/v1/stats", "", "", &st); code != 200 {
		t.Fatalf("stats: %d", code)
	}
	jobs := st.Sources["jobs"]
	if st.Active != 2 || jobs == nil || jobs.Deliveries != 4 || jobs.DuplicateDeliveries != 2 || jobs.DuplicateRate != 0.5 || st.DuplicateRate != 0.5 {
		t.Fatalf("stats: %+v, jobs %+v", st, jobs)
	}
}
