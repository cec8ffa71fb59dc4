-- Active records with date errors, per source, kept by every write that
-- changes what is counted (an ingest, a move, a restore, a re-read of the
-- event fields, a merge) in its own transaction, so an archive pass reads
-- these rows instead of counting the active table. check compares them
-- with a count.
CREATE TABLE date_error_counts (
	source TEXT    NOT NULL,
	shard  INTEGER NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (source, shard)
) WITHOUT ROWID;

INSERT INTO date_error_counts (source, shard, n)
	SELECT source, 0, count(*) FROM active WHERE date_errors IS NOT NULL GROUP BY source;
