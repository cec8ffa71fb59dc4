package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

var _ sqlstore.RecrawlPacker = engine{}

// recrawlPack is the expression the index active_source_last_updated_at
// carries (migration 021): the record's id and the advisor's seven
// integers as 16 hex digits each, turned into 64 bytes. The index stores
// the value at each write, so the advisor's read of a source is one index
// range with one column per record, parsed with encoding/binary; the
// expression here must be the index's own for the planner to read it from
// there (TestRecrawlReadUsesIndex). The smallest int64 stands for no event
// date, -1 for counters not kept.
const recrawlPack = `unhex(printf('%016x%016x%016x%016x%016x%016x%016x%016x', id, last_updated_at,
	coalesce(event_at, -9223372036854775807 - 1), coalesce(fetch_refetches, -1), coalesce(fetch_changes, 0),
	coalesce(fetch_changed_us, 0), coalesce(fetch_unchanged_us, 0), CAST(round(coalesce(fetch_changed_log, 0) * 1000000) AS INTEGER)))`

// RecrawlPack implements sqlstore.RecrawlPacker.
func (engine) RecrawlPack() string { return recrawlPack }

// recrawlCache is the page cache of a connection during the advisor's
// read, in KiB: the read touches each page of its range once, and every
// page a larger cache would hold is memory the process takes fresh from
// the system. At 100,000 records it saved a fifth of the pages faulted in
// and of the command's wall time.
const recrawlCache = 512

// RecrawlReader implements sqlstore.RecrawlPacker: a reader connection of
// its own, its page cache shrunk for the read and set back to the pool's
// size after it.
func (e engine) RecrawlReader(ctx context.Context) (sqlstore.Querier, func(), error) {
	c, err := e.s.r.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", recrawlCache)); err != nil {
		c.Close()
		return nil, nil, err
	}
	return sqlstore.SQL(c), func() {
		// A connection that cannot be set back is dropped from the pool
		// rather than left with the small cache.
		_, err := c.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = -%d", readerCache))
		if err != nil {
			c.Raw(func(any) error { return driver.ErrBadConn })
		}
		c.Close()
	}, nil
}
