-- Deliveries per source, kept by every ingest in its own transaction:
-- the items delivered and those that went to an existing record (a
-- re-crawl merged into its record instead of becoming a second one). The
-- two give the duplicate rate that stats, the API and /metrics report.
-- Each ingest adds to one of a few rows per source (shard), so concurrent
-- ingests of one source rarely wait for each other's row lock; readers
-- add the rows up.
CREATE TABLE deliveries (
	source     text COLLATE "C" NOT NULL,
	shard      integer NOT NULL,
	deliveries bigint  NOT NULL,
	duplicates bigint  NOT NULL,
	PRIMARY KEY (source, shard)
);
