-- Full-text search (see search.go). search_text holds the record's folded,
-- tokenised text, computed in Go at prepare time (crawlkeeper.SearchText);
-- NULL marks a record written before search existed, which `check`
-- reports and `crawlkeeper search --reindex` fills in.
--
-- Each table gets an FTS5 index over search_text in external-content mode
-- (the index stores no copy of the text; rowid is the record id), kept
-- right in the same transaction as every insert, content change, move and
-- delete (see search_pending below). The text is already folded and split
-- into tokens separated by single spaces, so the tokenizer only has to
-- split on spaces: FTS5's ascii tokenizer does exactly that (every
-- non-ASCII character is part of a token), at less cost than unicode61.

ALTER TABLE active ADD COLUMN search_text TEXT;
ALTER TABLE archive ADD COLUMN search_text TEXT;

CREATE VIRTUAL TABLE active_search USING fts5(
	search_text, content = 'active', content_rowid = 'id',
	tokenize = 'ascii'
);
CREATE VIRTUAL TABLE archive_search USING fts5(
	search_text, content = 'archive', content_rowid = 'id',
	tokenize = 'ascii'
);

-- The triggers do not write the FTS5 tables themselves: a statement that
-- fires a trigger which writes a virtual table runs in a statement
-- savepoint, and FTS5 writes its pending tokens to disk at every savepoint,
-- so an ingest writing its batch row by row would make one tiny index
-- segment per record (measured: ingest at less than half the speed).
-- Instead they note each record whose entry must change in search_pending,
-- with the text its entry holds (NULL: none), and the store applies the
-- notes with one set-based statement per table just before every write
-- transaction commits (see commitWrite in search.go). The index so changes
-- in the same transaction as the records; `check` reports notes left
-- behind.
CREATE TABLE search_pending (
	tbl     INTEGER NOT NULL, -- 0 active, 1 archive
	id      INTEGER NOT NULL,
	indexed TEXT,
	PRIMARY KEY (tbl, id)
) WITHOUT ROWID;

-- OR IGNORE keeps the first note of a record in a transaction: what the
-- index held when the transaction began.
CREATE TRIGGER active_search_insert AFTER INSERT ON active BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (0, new.id, NULL);
END;
CREATE TRIGGER active_search_delete AFTER DELETE ON active BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (0, old.id, old.search_text);
END;
CREATE TRIGGER active_search_update AFTER UPDATE OF search_text ON active BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (0, old.id, old.search_text);
END;

CREATE TRIGGER archive_search_insert AFTER INSERT ON archive BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (1, new.id, NULL);
END;
CREATE TRIGGER archive_search_delete AFTER DELETE ON archive BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (1, old.id, old.search_text);
END;
CREATE TRIGGER archive_search_update AFTER UPDATE OF search_text ON archive BEGIN
	INSERT OR IGNORE INTO search_pending (tbl, id, indexed) VALUES (1, old.id, old.search_text);
END;
