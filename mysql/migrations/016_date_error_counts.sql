-- Active records with date errors, per source, kept by every write that
-- changes what is counted (an ingest, a move, a restore, a re-read of the
-- event fields, a merge) in its own transaction, so an archive pass reads
-- these rows instead of counting the active table. check compares them
-- with a count. Writers add to one of a few rows per source (shard), as
-- for deliveries.
CREATE TABLE IF NOT EXISTS date_error_counts (
	source VARBINARY(1024) NOT NULL,
	shard  INT             NOT NULL,
	n      BIGINT          NOT NULL,
	PRIMARY KEY (source, shard)
) ENGINE=InnoDB;

INSERT IGNORE INTO date_error_counts (source, shard, n)
	SELECT source, 0, count(*) FROM active WHERE date_errors IS NOT NULL GROUP BY source;
