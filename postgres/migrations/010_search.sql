-- Full-text search (see search.go). search_text holds the record's folded,
-- tokenised text, computed in Go at prepare time (crawlkeeper.SearchText);
-- NULL marks a record written before search existed, which `check`
-- reports and `crawlkeeper search --reindex` fills in. search_config is
-- the source's text search configuration ('simple' unless the source sets
-- search_language).
--
-- search_tsv is a stored generated column, so PostgreSQL computes it and
-- its GIN index entry in the same statement as every insert, change, move
-- and delete of the record: the index cannot drift from the rows. The
-- wrapper function is IMMUTABLE so that a generated column may use it;
-- that holds as long as a configuration's name keeps its meaning.
-- Generated columns need PostgreSQL 12 or later.

CREATE FUNCTION crawlkeeper_search_vector(config text, body text) RETURNS tsvector
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $$ SELECT to_tsvector(config::regconfig, coalesce(body, '')) $$;

ALTER TABLE active
	ADD COLUMN search_text text,
	ADD COLUMN search_config text NOT NULL DEFAULT 'simple',
	ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (crawlkeeper_search_vector(search_config, search_text)) STORED;
ALTER TABLE archive
	ADD COLUMN search_text text,
	ADD COLUMN search_config text NOT NULL DEFAULT 'simple',
	ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (crawlkeeper_search_vector(search_config, search_text)) STORED;

CREATE INDEX active_search ON active USING gin (search_tsv);
CREATE INDEX archive_search ON archive USING gin (search_tsv);
