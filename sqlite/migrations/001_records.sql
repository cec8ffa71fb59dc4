-- Records live in two tables with the same columns and indexes: active
-- holds what searches see, archive holds expired records. A key is in at
-- most one of them (checked by `crawlkeeper check`). Times are Unix
-- microseconds in UTC.

CREATE TABLE meta (
	name  TEXT PRIMARY KEY,
	value BLOB NOT NULL
) WITHOUT ROWID;

INSERT INTO meta (name, value) VALUES ('next_id', 1);

CREATE TABLE active (
	id                INTEGER PRIMARY KEY,
	key               TEXT    NOT NULL,
	key_parts         TEXT    NOT NULL,
	source            TEXT    NOT NULL,
	title             TEXT    NOT NULL,
	url               TEXT    NOT NULL,
	item              BLOB    NOT NULL,
	content_hash      TEXT    NOT NULL,
	crawled_at        INTEGER NOT NULL,
	last_updated_at   INTEGER NOT NULL,
	last_changed_at   INTEGER NOT NULL,
	version           INTEGER NOT NULL,
	event_at          INTEGER,
	date_errors       TEXT,
	processed_at      INTEGER,
	processed_version INTEGER NOT NULL DEFAULT 0,
	processed_chain   TEXT    NOT NULL DEFAULT '',
	derived           BLOB
);

-- The rule indexes carry the columns an archive selection needs (the
-- rowid, which is id, comes with every index entry), so selecting due
-- records reads only the index and never the rows it points to.
CREATE UNIQUE INDEX active_key ON active (key);
CREATE INDEX active_crawled_at ON active (crawled_at, id, source, version, last_updated_at);
CREATE INDEX active_last_updated_at ON active (last_updated_at, id, source, version);
CREATE INDEX active_event_at ON active (event_at, id, source, version, last_updated_at);
CREATE INDEX active_source_last_updated_at ON active (source, last_updated_at);

-- The archive stores item payloads compressed with zstd; item_bytes keeps
-- the uncompressed size for stats.
CREATE TABLE archive (
	id                INTEGER PRIMARY KEY,
	key               TEXT    NOT NULL,
	key_parts         TEXT    NOT NULL,
	source            TEXT    NOT NULL,
	title             TEXT    NOT NULL,
	url               TEXT    NOT NULL,
	item              BLOB    NOT NULL,
	item_bytes        INTEGER NOT NULL,
	content_hash      TEXT    NOT NULL,
	crawled_at        INTEGER NOT NULL,
	last_updated_at   INTEGER NOT NULL,
	last_changed_at   INTEGER NOT NULL,
	version           INTEGER NOT NULL,
	event_at          INTEGER,
	date_errors       TEXT,
	processed_at      INTEGER,
	processed_version INTEGER NOT NULL DEFAULT 0,
	processed_chain   TEXT    NOT NULL DEFAULT '',
	derived           BLOB,
	archived_at       INTEGER NOT NULL,
	archive_reason    TEXT    NOT NULL
);

CREATE UNIQUE INDEX archive_key ON archive (key);
CREATE INDEX archive_crawled_at ON archive (crawled_at);
CREATE INDEX archive_last_updated_at ON archive (last_updated_at);
CREATE INDEX archive_event_at ON archive (event_at);
CREATE INDEX archive_source_last_updated_at ON archive (source, last_updated_at);
CREATE INDEX archive_archived_at ON archive (archived_at);

-- History follows the record id, which is stable across active and
-- archive, so moving a record never moves its history.
CREATE TABLE history (
	record_id    INTEGER NOT NULL,
	version      INTEGER NOT NULL,
	item         BLOB    NOT NULL,
	content_hash TEXT    NOT NULL,
	valid_from   INTEGER NOT NULL,
	valid_to     INTEGER NOT NULL,
	PRIMARY KEY (record_id, version)
) WITHOUT ROWID;
