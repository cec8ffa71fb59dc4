-- The embedded crawl monitor (package roaringmon) keeps its data next to
-- the records. monitor_targets is the append-only target dictionary: the
-- id is the target's bitmap offset, dense from 0 and never reused.
-- monitor_log holds one row per write (the batch's serialized bitmaps per
-- round, set and bucket, encoded by roaringmon); monitor_parts hold a
-- snapshot folded from the log up to monitor_meta.snapshot_seq.

CREATE TABLE monitor_targets (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

CREATE TABLE monitor_log (
	seq  INTEGER PRIMARY KEY AUTOINCREMENT,
	body BLOB NOT NULL
);

CREATE TABLE monitor_parts (
	name TEXT PRIMARY KEY,
	body BLOB NOT NULL
);

CREATE TABLE monitor_meta (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO monitor_meta (name, value) VALUES ('snapshot_seq', 0);
