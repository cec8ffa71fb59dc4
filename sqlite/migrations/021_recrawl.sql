-- The recrawl advisor (crawlkeeper.RecrawlStore): fetch_changed_log adds up
-- the natural logarithms of the lengths in seconds of the intervals that
-- ended in a change (crawlkeeper.FetchCounts.ChangedLog); NULL, like the
-- other fetch counters, for a record until its next delivery.
ALTER TABLE active ADD COLUMN fetch_changed_log REAL;
ALTER TABLE archive ADD COLUMN fetch_changed_log REAL;

-- The advisor reads every active record of a source. The per-source index
-- carries what it reads, packed with the record's id into one 64-byte value (see recrawl.go,
-- whose expression must stay this one), so that read walks the index alone,
-- one column per record, and never the rows with their items. Ingest
-- already rewrites this entry on every delivery, as last_updated_at
-- changes; the value makes it longer, not more frequent. Its prefix serves
-- what the narrow index served.
DROP INDEX active_source_last_updated_at;
CREATE INDEX active_source_last_updated_at ON active (source, last_updated_at,
	unhex(printf('%016x%016x%016x%016x%016x%016x%016x%016x', id, last_updated_at,
	coalesce(event_at, -9223372036854775807 - 1), coalesce(fetch_refetches, -1), coalesce(fetch_changes, 0),
	coalesce(fetch_changed_us, 0), coalesce(fetch_unchanged_us, 0), CAST(round(coalesce(fetch_changed_log, 0) * 1000000) AS INTEGER))));
