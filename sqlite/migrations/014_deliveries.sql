-- Deliveries per source, kept by every ingest in its own transaction:
-- the items delivered and those that went to an existing record (a
-- re-crawl merged into its record instead of becoming a second one). The
-- two give the duplicate rate that stats, the API and /metrics report.
-- shard spreads concurrent writers over rows on the server stores; the
-- embedded store has one writer and always uses shard 0.
CREATE TABLE deliveries (
	source     TEXT    NOT NULL,
	shard      INTEGER NOT NULL,
	deliveries INTEGER NOT NULL,
	duplicates INTEGER NOT NULL,
	PRIMARY KEY (source, shard)
) WITHOUT ROWID;
