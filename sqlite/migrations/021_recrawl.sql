-- The recrawl advisor (crawlkeeper.RecrawlStore): fetch_changed_log adds up
-- the natural logarithms of the lengths in seconds of the intervals that
-- ended in a change (crawlkeeper.FetchCounts.ChangedLog); NULL, like the
-- other fetch counters, for a record until its next delivery.
ALTER TABLE active ADD COLUMN fetch_changed_log REAL;
ALTER TABLE archive ADD COLUMN fetch_changed_log REAL;

-- The advisor reads every active record of a source. The per-source index
-- carries the columns it reads, so that read walks the index alone and
-- never the rows and their items (a row with its item spans pages). Ingest
-- already rewrites this entry on every delivery, as last_updated_at
-- changes; the columns make it longer, not more frequent. Its prefix
-- serves what the narrow index served.
DROP INDEX active_source_last_updated_at;
CREATE INDEX active_source_last_updated_at ON active (source, last_updated_at, id, url, last_target,
	crawled_at, last_changed_at, event_at,
	fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log);
