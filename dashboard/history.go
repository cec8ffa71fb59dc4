package dashboard

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// ingestHistoryKept is how far back IngestHistory remembers.
const ingestHistoryKept = 7 * 24 * time.Hour

// IngestHistory counts the items this process ingested per hour, for the
// overview's chart. Observe is an ingest hook (crawlkeeper.AfterCommit):
// serve adds it to its ingester, so the counts cover every committed
// batch, whichever way the items came. The counts live in memory: they
// start with the process, like the ingest counters of /metrics.
type IngestHistory struct {
	now   func() time.Time
	mu    sync.Mutex
	hours map[int64]int64 // hour start (Unix seconds) → items
}

// NewIngestHistory returns an empty history dated by now (the ingester's
// clock).
func NewIngestHistory(now func() time.Time) *IngestHistory {
	if now == nil {
		now = time.Now
	}
	return &IngestHistory{now: now, hours: map[int64]int64{}}
}

// Observe counts a committed batch's items in the current hour.
func (h *IngestHistory) Observe(_ context.Context, items []*crawlkeeper.Prepared, res *crawlkeeper.IngestResult) {
	n := int64(len(res.Outcomes))
	if n == 0 {
		n = int64(len(items))
	}
	now := h.now()
	hour := now.Truncate(time.Hour).Unix()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hours[hour] += n
	if len(h.hours) > int(ingestHistoryKept/time.Hour)+24 {
		cut := now.Add(-ingestHistoryKept).Unix()
		for k := range h.hours {
			if k < cut {
				delete(h.hours, k)
			}
		}
	}
}

// Chart draws the items ingested in each of the last n hours, the
// current one last.
func (h *IngestHistory) Chart(now time.Time, n int) Chart {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := Chart{Kind: "bars", Time: true, Series: []Series{{Label: "items ingested"}}}
	last := now.Truncate(time.Hour)
	for i := n - 1; i >= 0; i-- {
		hour := last.Add(-time.Duration(i) * time.Hour).Unix()
		c.X = append(c.X, float64(hour))
		c.Series[0].Values = append(c.Series[0].Values, val(float64(h.hours[hour])))
	}
	return c
}

// MovesPerDayChart draws the records archive passes moved on each of the
// last days UTC days, today last, from the newest journal entries.
func MovesPerDayChart(entries []crawlkeeper.JournalEntry, now time.Time, days int) Chart {
	perDay := map[int64]float64{}
	for _, e := range entries {
		var rep crawlkeeper.ArchiveReport
		if json.Unmarshal(e.Body, &rep) != nil || rep.DryRun {
			continue
		}
		at := rep.StartedAt
		if at.IsZero() {
			at = e.At
		}
		perDay[at.UTC().Truncate(24*time.Hour).Unix()] += float64(rep.Archived)
	}
	c := Chart{Kind: "bars", Time: true, Series: []Series{{Label: "records moved"}}}
	today := now.UTC().Truncate(24 * time.Hour)
	for i := days - 1; i >= 0; i-- {
		day := today.AddDate(0, 0, -i).Unix()
		c.X = append(c.X, float64(day))
		c.Series[0].Values = append(c.Series[0].Values, val(perDay[day]))
	}
	return c
}
