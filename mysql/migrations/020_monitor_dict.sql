-- The target dictionary in blocks: each row holds n consecutive names
-- (ids first_id .. first_id+n-1) joined by newlines, which target names never
-- contain. The embedded monitor reads the whole dictionary into memory
-- and looks names up there, so the table needs no index on names and the
-- dictionary takes about its names' own bytes (monitor_targets kept a row
-- and a unique index entry per name, about 4.2 times the names). Blocks
-- stay under half a page, so InnoDB keeps them in the row rather than on
-- pages of their own (see MonitorDictBlock). monitor_targets is copied
-- into blocks by the store when it opens, resumably, then dropped;
-- monitor_meta.dict_layout says how far that went (1: copying, 2:
-- copied, 3: the old table dropped).
CREATE TABLE IF NOT EXISTS monitor_dict (
	first_id BIGINT     NOT NULL PRIMARY KEY,
	n     INT        NOT NULL,
	names MEDIUMBLOB NOT NULL
) ENGINE=InnoDB;

INSERT IGNORE INTO monitor_meta (name, value) VALUES ('dict_layout', 1);
