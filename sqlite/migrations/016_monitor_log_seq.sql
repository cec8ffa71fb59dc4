-- Monitor log entries take their sequence numbers from the counter
-- monitor_meta.log_seq, as on the server stores (one implementation of
-- the monitor's persistence serves every SQL engine). The counter starts
-- at the highest number handed out so far: AUTOINCREMENT's own counter
-- also remembers entries already folded away.
INSERT INTO monitor_meta (name, value) SELECT 'log_seq', max(
	coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'monitor_log'), 0),
	coalesce((SELECT max(seq) FROM monitor_log), 0),
	(SELECT value FROM monitor_meta WHERE name = 'snapshot_seq'));
