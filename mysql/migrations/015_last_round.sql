-- The round and target of each record's last delivery that carried them
-- (crawlkeeper.Record.LastRound), written with the record by every ingest
-- and carried by every move, for the search filters. '' means none. Bytes,
-- like source, so the filters match exactly. Each table gets both columns
-- in one statement (an instant ALTER on MySQL 8 and MariaDB 10.3+).
--
-- No index: search finds its candidates in the FULLTEXT index and filters
-- them on these columns, and an index here would get a new entry for
-- every record on its first delivery of each round, a cost every ingest
-- would pay for a filter that never drives a query.
ALTER TABLE active ADD COLUMN last_round VARBINARY(128) NOT NULL DEFAULT '', ADD COLUMN last_target VARBINARY(1024) NOT NULL DEFAULT '';
ALTER TABLE archive ADD COLUMN last_round VARBINARY(128) NOT NULL DEFAULT '', ADD COLUMN last_target VARBINARY(1024) NOT NULL DEFAULT '';
