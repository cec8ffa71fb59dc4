-- The round and target of each record's last delivery that carried them
-- (crawlkeeper.Record.LastRound), written with the record by every ingest
-- and carried by every move, for the search filters. '' means none. Adding
-- a column with a constant default rewrites no rows.
--
-- No index: search finds its candidates in the full-text index and
-- filters them on these columns, and an index here would get a new entry
-- for every record on its first delivery of each round (a HOT update no
-- longer), a cost every ingest would pay for a filter that never drives a
-- query.
ALTER TABLE active ADD COLUMN last_round text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN last_target text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE archive ADD COLUMN last_round text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN last_target text COLLATE "C" NOT NULL DEFAULT '';
