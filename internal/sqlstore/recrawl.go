package sqlstore

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper"
)

var _ crawlkeeper.RecrawlStore = (*Store)(nil)

// RecrawlCols are the columns RecrawlRecords reads, in its scan order. An
// engine may cover them with an index on (source, ...) so that the read
// never visits the rows and their items (SQLite does, see its migration
// 021).
const RecrawlCols = "id, url, last_target, crawled_at, last_updated_at, last_changed_at, event_at, " + fetchCols

// RecrawlRecords implements crawlkeeper.RecrawlStore: one query over the
// source's active records.
func (s *Store) RecrawlRecords(ctx context.Context, source string) ([]crawlkeeper.RecrawlRecord, error) {
	var out []crawlkeeper.RecrawlRecord
	err := EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var (
			r                         crawlkeeper.RecrawlRecord
			crawled, updated, changed int64
			eventAt                   *int64
			f                         [4]*int64
			changedLog                *float64
		)
		if err := rows.Scan(&r.ID, &r.URL, &r.Target, &crawled, &updated, &changed, &eventAt,
			&f[0], &f[1], &f[2], &f[3], &changedLog); err != nil {
			return err
		}
		r.CrawledAt = crawlkeeper.MicrosTime(crawled)
		r.LastUpdatedAt = crawlkeeper.MicrosTime(updated)
		r.LastChangedAt = crawlkeeper.MicrosTime(changed)
		r.EventAt = Time(eventAt)
		r.Fetches = fetchCounts(f, changedLog)
		out = append(out, r)
		return nil
	}, `SELECT `+RecrawlCols+` FROM active WHERE source = ?`, source)
	if err != nil {
		return nil, s.e.Wrap("read the recrawl counters", err)
	}
	return out, nil
}

// fetchCounts builds a record's FetchCounts from its nullable columns: nil
// when they were never set (a record stored before they were kept).
func fetchCounts(f [4]*int64, changedLog *float64) *crawlkeeper.FetchCounts {
	if f[0] == nil || f[1] == nil || f[2] == nil || f[3] == nil {
		return nil
	}
	c := &crawlkeeper.FetchCounts{Refetches: *f[0], Changes: *f[1], ChangedUS: *f[2], UnchangedUS: *f[3]}
	if changedLog != nil {
		c.ChangedLog = *changedLog
	}
	return c
}
