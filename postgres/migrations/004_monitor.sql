-- The embedded crawl monitor (package roaringmon) keeps its data next to
-- the records, as in the embedded store. monitor_targets is the
-- append-only target dictionary: the id is the target's bitmap offset,
-- dense from 0 and never reused. monitor_log holds one row per write (the
-- batch's serialized bitmaps per round, set and bucket, encoded by
-- roaringmon); monitor_parts hold a snapshot folded from the log up to
-- monitor_meta.snapshot_seq. Names are bytea: targets and rounds are any
-- bytes without control characters, not necessarily UTF-8.
--
-- monitor_meta.log_seq is the last sequence number handed out. Every
-- monitor write locks that row first (SELECT ... FOR UPDATE) and takes
-- its numbers from it, so writers commit in sequence order and a rolled
-- back writer leaves no gap (see internal/sqlstore/marker.go).

CREATE TABLE monitor_targets (
	id   bigint PRIMARY KEY,
	name bytea  NOT NULL UNIQUE
);

CREATE TABLE monitor_log (
	seq  bigint PRIMARY KEY,
	body bytea  NOT NULL
);

CREATE TABLE monitor_parts (
	name bytea PRIMARY KEY,
	body bytea NOT NULL
);

CREATE TABLE monitor_meta (
	name  text   PRIMARY KEY,
	value bigint NOT NULL
);

INSERT INTO monitor_meta (name, value) VALUES ('log_seq', 0), ('snapshot_seq', 0);
