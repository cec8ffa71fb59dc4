-- The embedded crawl monitor (package roaringmon) keeps its data next to
-- the records, as in the embedded store. monitor_targets is the
-- append-only target dictionary: the id is the target's bitmap offset,
-- dense from 0 and never reused. monitor_log holds one entry per write
-- (the batch's serialized bitmaps per round, set and bucket, encoded by
-- roaringmon); monitor_parts hold a snapshot folded from the log up to
-- monitor_meta.snapshot_seq. A body larger than a statement may carry
-- (max_allowed_packet) is split over rows numbered by chunk.
--
-- monitor_meta.log_seq is the last sequence number handed out. Every
-- monitor write locks that row first (SELECT ... FOR UPDATE) and takes
-- its numbers from it, so writers commit in sequence order and a rolled
-- back writer leaves no gap (see internal/sqlstore/marker.go).

CREATE TABLE IF NOT EXISTS monitor_targets (
	id   BIGINT          NOT NULL PRIMARY KEY,
	name VARBINARY(1024) NOT NULL,
	UNIQUE KEY monitor_targets_name (name)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS monitor_log (
	seq   BIGINT   NOT NULL,
	chunk INT      NOT NULL,
	body  LONGBLOB NOT NULL,
	PRIMARY KEY (seq, chunk)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS monitor_parts (
	name  VARBINARY(1100) NOT NULL,
	chunk INT             NOT NULL,
	body  LONGBLOB        NOT NULL,
	PRIMARY KEY (name, chunk)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS monitor_meta (
	name  VARBINARY(64) NOT NULL PRIMARY KEY,
	value BIGINT        NOT NULL
) ENGINE=InnoDB;

INSERT IGNORE INTO monitor_meta (name, value) VALUES ('log_seq', 0), ('snapshot_seq', 0);
