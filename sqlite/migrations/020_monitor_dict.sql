-- The target dictionary in blocks: each row holds n consecutive names
-- (ids first_id .. first_id+n-1) joined by newlines, which target names never
-- contain. The embedded monitor reads the whole dictionary into memory
-- and looks names up there, so the table needs no index on names and the
-- dictionary takes about its names' own bytes (monitor_targets kept a row
-- and an index entry per name, about 2.7 times the names). Blocks stay
-- under a page (see MonitorDictBlock). monitor_targets is copied into
-- blocks by the store when it opens, resumably, then dropped;
-- monitor_meta.dict_layout says how far that went (1: copying, 2:
-- copied, 3: the old table dropped).
CREATE TABLE monitor_dict (
	first_id INTEGER PRIMARY KEY,
	n     INTEGER NOT NULL,
	names BLOB    NOT NULL
);

INSERT OR IGNORE INTO monitor_meta (name, value) VALUES ('dict_layout', 1);
