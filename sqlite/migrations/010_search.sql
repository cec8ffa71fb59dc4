-- Full-text search (see search.go). search_text holds the record's folded,
-- tokenised text, computed in Go at prepare time (crawlkeeper.SearchText);
-- NULL marks a record written before search existed, which `check`
-- reports and `crawlkeeper search --reindex` fills in.
--
-- Each table gets an FTS5 index over search_text in external-content mode
-- (the index stores no copy of the text; rowid is the record id), kept
-- right by triggers in the same transaction as every insert, content
-- change, move and delete. The text is already folded and split, so the
-- tokenizer only splits on spaces: unicode61 without its own diacritic
-- removal, with marks (M*) counted as letters so that Indic vowel signs
-- stay inside their word.

ALTER TABLE active ADD COLUMN search_text TEXT;
ALTER TABLE archive ADD COLUMN search_text TEXT;

CREATE VIRTUAL TABLE active_search USING fts5(
	search_text, content = 'active', content_rowid = 'id',
	tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
);
CREATE VIRTUAL TABLE archive_search USING fts5(
	search_text, content = 'archive', content_rowid = 'id',
	tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
);

CREATE TRIGGER active_search_insert AFTER INSERT ON active WHEN new.search_text IS NOT NULL BEGIN
	INSERT INTO active_search (rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER active_search_delete AFTER DELETE ON active WHEN old.search_text IS NOT NULL BEGIN
	INSERT INTO active_search (active_search, rowid, search_text) VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER active_search_update AFTER UPDATE OF search_text ON active BEGIN
	INSERT INTO active_search (active_search, rowid, search_text) SELECT 'delete', old.id, old.search_text WHERE old.search_text IS NOT NULL;
	INSERT INTO active_search (rowid, search_text) SELECT new.id, new.search_text WHERE new.search_text IS NOT NULL;
END;

CREATE TRIGGER archive_search_insert AFTER INSERT ON archive WHEN new.search_text IS NOT NULL BEGIN
	INSERT INTO archive_search (rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER archive_search_delete AFTER DELETE ON archive WHEN old.search_text IS NOT NULL BEGIN
	INSERT INTO archive_search (archive_search, rowid, search_text) VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER archive_search_update AFTER UPDATE OF search_text ON archive BEGIN
	INSERT INTO archive_search (archive_search, rowid, search_text) SELECT 'delete', old.id, old.search_text WHERE old.search_text IS NOT NULL;
	INSERT INTO archive_search (rowid, search_text) SELECT new.id, new.search_text WHERE new.search_text IS NOT NULL;
END;
