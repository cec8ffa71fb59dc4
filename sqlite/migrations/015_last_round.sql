-- The round and target of each record's last delivery that carried them
-- (crawlkeeper.Record.LastRound), written with the record by every ingest
-- and carried by every move, for the search filters. '' means none.
--
-- No index: search finds its candidates in the full-text index and
-- filters them on these columns, and an index here would be rewritten for
-- every record on its first delivery of each round, a cost every ingest
-- would pay for a filter that never drives a query.
ALTER TABLE active ADD COLUMN last_round TEXT NOT NULL DEFAULT '';
ALTER TABLE active ADD COLUMN last_target TEXT NOT NULL DEFAULT '';
ALTER TABLE archive ADD COLUMN last_round TEXT NOT NULL DEFAULT '';
ALTER TABLE archive ADD COLUMN last_target TEXT NOT NULL DEFAULT '';
