-- Active records with date errors, per source, kept by every write that
-- changes what is counted (an ingest, a move, a restore, a re-read of the
-- event fields, a merge) in its own transaction, so an archive pass reads
-- these rows instead of counting the active table. check compares them
-- with a count. Writers add to one of a few rows per source (shard), as
-- for deliveries.
CREATE TABLE date_error_counts (
	source text COLLATE "C" NOT NULL,
	shard  integer NOT NULL,
	n      bigint  NOT NULL,
	PRIMARY KEY (source, shard)
);

INSERT INTO date_error_counts (source, shard, n)
	SELECT source, 0, count(*) FROM active WHERE date_errors IS NOT NULL GROUP BY source;
