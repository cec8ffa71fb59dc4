-- Every rescan write-back changes processed_at, so an index on it costs a
-- secondary index delete and insert per processed record. The freshness
-- query, its only reader, scans the table anyway and takes the minimum in
-- that scan.
ALTER TABLE active DROP INDEX active_processed_at;
