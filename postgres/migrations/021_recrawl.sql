-- The recrawl advisor (crawlkeeper.RecrawlStore): fetch_changed_log adds up
-- the natural logarithms of the lengths in seconds of the intervals that
-- ended in a change (crawlkeeper.FetchCounts.ChangedLog); NULL, like the
-- other fetch counters, for a record until its next delivery.
ALTER TABLE active ADD COLUMN fetch_changed_log double precision;
ALTER TABLE archive ADD COLUMN fetch_changed_log double precision;
