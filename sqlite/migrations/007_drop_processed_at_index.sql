-- Every rescan write-back changes processed_at, so an index on it costs
-- an index delete and insert per processed record, on the hottest write
-- path of the pipeline. Its only reader was the freshness query, which
-- scans the whole table anyway and now takes the minimum in that scan.
DROP INDEX IF EXISTS active_processed_at;
