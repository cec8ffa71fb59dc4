-- Each record's deliveries for the recrawl advisor (crawlkeeper.FetchCounts):
-- re-deliveries, those that changed the content, and the microseconds of
-- the intervals that ended in a change and that did not. Ingest adds to
-- them; NULL for records stored before, until their next delivery.
ALTER TABLE active ADD COLUMN fetch_refetches bigint;
ALTER TABLE active ADD COLUMN fetch_changes bigint;
ALTER TABLE active ADD COLUMN fetch_changed_us bigint;
ALTER TABLE active ADD COLUMN fetch_unchanged_us bigint;
ALTER TABLE archive ADD COLUMN fetch_refetches bigint;
ALTER TABLE archive ADD COLUMN fetch_changes bigint;
ALTER TABLE archive ADD COLUMN fetch_changed_us bigint;
ALTER TABLE archive ADD COLUMN fetch_unchanged_us bigint;
