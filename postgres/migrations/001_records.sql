-- Records live in two tables with the same columns and indexes: active
-- holds what searches see, archive holds expired records. Times are Unix
-- microseconds in UTC, as in the embedded store, so every instant the
-- domain produces round-trips exactly.

-- Record ids come from a sequence: never reused, even when a transaction
-- that took some rolls back.
CREATE SEQUENCE record_ids AS bigint START 1;

-- Every key stored in active or archive has a row here. A transaction that
-- inserts a record or moves one between the tables first locks the rows of
-- its keys (inserting the missing ones), in key order, so two processes
-- never decide about the same key at once and a key is never in both
-- tables. The table holds nothing else.
CREATE TABLE record_keys (
	key text COLLATE "C" PRIMARY KEY
);

CREATE TABLE active (
	id                bigint PRIMARY KEY,
	key               text COLLATE "C" NOT NULL,
	key_parts         text   NOT NULL,
	source            text COLLATE "C" NOT NULL,
	title             text   NOT NULL,
	url               text   NOT NULL,
	item              bytea  NOT NULL,
	content_hash      text   NOT NULL,
	crawled_at        bigint NOT NULL,
	last_updated_at   bigint NOT NULL,
	last_changed_at   bigint NOT NULL,
	version           bigint NOT NULL,
	event_at          bigint,
	date_errors       text,
	processed_at      bigint,
	processed_version bigint NOT NULL DEFAULT 0,
	processed_chain   text   NOT NULL DEFAULT '',
	derived           bytea
);

CREATE UNIQUE INDEX active_key ON active (key);
-- The rule indexes carry what an archive selection reads, so it can be an
-- index-only scan in (column, id) order.
CREATE INDEX active_crawled_at ON active (crawled_at, id) INCLUDE (source, version, last_updated_at);
CREATE INDEX active_last_updated_at ON active (last_updated_at, id) INCLUDE (source, version);
CREATE INDEX active_event_at ON active (event_at, id) INCLUDE (source, version, last_updated_at);
CREATE INDEX active_source_last_updated_at ON active (source, last_updated_at);

-- The archive stores item payloads compressed with zstd (TOAST compresses
-- only values over about 2 kB, and most items are smaller); item_bytes
-- keeps the uncompressed size for stats.
CREATE TABLE archive (
	id                bigint PRIMARY KEY,
	key               text COLLATE "C" NOT NULL,
	key_parts         text   NOT NULL,
	source            text COLLATE "C" NOT NULL,
	title             text   NOT NULL,
	url               text   NOT NULL,
	item              bytea  NOT NULL,
	item_bytes        bigint NOT NULL,
	content_hash      text   NOT NULL,
	crawled_at        bigint NOT NULL,
	last_updated_at   bigint NOT NULL,
	last_changed_at   bigint NOT NULL,
	version           bigint NOT NULL,
	event_at          bigint,
	date_errors       text,
	processed_at      bigint,
	processed_version bigint NOT NULL DEFAULT 0,
	processed_chain   text   NOT NULL DEFAULT '',
	derived           bytea,
	archived_at       bigint NOT NULL,
	archive_reason    text   NOT NULL
);

-- Compressed payloads do not compress again: keep TOAST from trying.
ALTER TABLE archive ALTER COLUMN item SET STORAGE EXTERNAL;

CREATE UNIQUE INDEX archive_key ON archive (key);
CREATE INDEX archive_crawled_at ON archive (crawled_at);
CREATE INDEX archive_last_updated_at ON archive (last_updated_at);
CREATE INDEX archive_event_at ON archive (event_at);
CREATE INDEX archive_source_last_updated_at ON archive (source, last_updated_at);
CREATE INDEX archive_archived_at ON archive (archived_at);

-- History follows the record id, which is stable across active and
-- archive, so moving a record never moves its history.
CREATE TABLE history (
	record_id    bigint NOT NULL,
	version      bigint NOT NULL,
	item         bytea  NOT NULL,
	content_hash text   NOT NULL,
	valid_from   bigint NOT NULL,
	valid_to     bigint NOT NULL,
	PRIMARY KEY (record_id, version)
);
