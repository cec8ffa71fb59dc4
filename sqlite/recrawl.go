package sqlite

import "github.com/crawlkeeper/crawlkeeper/internal/sqlstore"

var _ sqlstore.RecrawlPacker = engine{}

// recrawlPack is the expression the index active_source_last_updated_at
// carries (migration 021): the record's id and the advisor's seven
// integers as 16 hex digits each, turned into 64 bytes. The index stores
// the value at each write, so the advisor's read of a source is one index
// range with one column per record, parsed with encoding/binary; the expression here must be the
// index's own for the planner to read it from there
// (TestRecrawlReadUsesIndex). The smallest int64 stands for no event date,
// -1 for counters not kept.
const recrawlPack = `unhex(printf('%016x%016x%016x%016x%016x%016x%016x%016x', id, last_updated_at,
	coalesce(event_at, -9223372036854775807 - 1), coalesce(fetch_refetches, -1), coalesce(fetch_changes, 0),
	coalesce(fetch_changed_us, 0), coalesce(fetch_unchanged_us, 0), CAST(round(coalesce(fetch_changed_log, 0) * 1000000) AS INTEGER)))`

// RecrawlPack implements sqlstore.RecrawlPacker.
func (engine) RecrawlPack() string { return recrawlPack }
