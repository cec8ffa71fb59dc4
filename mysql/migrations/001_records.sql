-- Records live in two tables with the same columns and indexes: active
-- holds what searches see, archive holds expired records. Times are Unix
-- microseconds in UTC, as in the embedded store (DATETIME stops at the
-- year 1000 and 9999; an event date outside must not fail an ingest).
--
-- MySQL and MariaDB commit each DDL statement on its own, so every
-- statement here can run again after a crash half-way through.
--
-- Identifier-like columns (key, source, names) are VARBINARY: they compare
-- byte for byte like the embedded store, with no collation, no trailing-
-- space padding, and the same rules on MySQL and MariaDB (whose binary
-- NO PAD collations have different names). Text columns are utf8mb4_bin.

-- next_id is the id the next new record gets; ids are taken from it in
-- short transactions of their own and never reused.
CREATE TABLE IF NOT EXISTS meta (
	name  VARBINARY(255) NOT NULL PRIMARY KEY,
	value BIGINT         NOT NULL
) ENGINE=InnoDB;

INSERT INTO meta (name, value) VALUES ('next_id', 1) ON DUPLICATE KEY UPDATE name = name;

-- Every key stored in active or archive has a row here. A transaction that
-- inserts a record or moves one between the tables first inserts or locks
-- the rows of its keys, in key order, so two processes never decide about
-- the same key at once and a key is never in both tables.
CREATE TABLE IF NOT EXISTS record_keys (
	`key` VARBINARY(255) NOT NULL PRIMARY KEY
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS active (
	id                BIGINT          NOT NULL PRIMARY KEY,
	`key`             VARBINARY(255)  NOT NULL,
	key_parts         MEDIUMTEXT      NOT NULL,
	source            VARBINARY(1024) NOT NULL,
	title             MEDIUMTEXT      NOT NULL,
	url               MEDIUMTEXT      NOT NULL,
	item              LONGBLOB        NOT NULL,
	content_hash      VARBINARY(255)  NOT NULL,
	crawled_at        BIGINT          NOT NULL,
	last_updated_at   BIGINT          NOT NULL,
	last_changed_at   BIGINT          NOT NULL,
	version           BIGINT          NOT NULL,
	event_at          BIGINT          NULL,
	date_errors       MEDIUMTEXT      NULL,
	processed_at      BIGINT          NULL,
	processed_version BIGINT          NOT NULL DEFAULT 0,
	processed_chain   VARBINARY(4096) NOT NULL DEFAULT '',
	derived           LONGBLOB        NULL,
	UNIQUE KEY active_key (`key`),
	-- The rule indexes carry what an archive selection reads (InnoDB
	-- appends the primary key), so selection reads only the index.
	KEY active_crawled_at (crawled_at, id, source, version, last_updated_at),
	KEY active_last_updated_at (last_updated_at, id, source, version),
	KEY active_event_at (event_at, id, source, version, last_updated_at),
	KEY active_source_last_updated_at (source, last_updated_at),
	-- Freshness queries look for the oldest processed_at.
	KEY active_processed_at (processed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC;

-- The archive stores item payloads compressed with zstd (InnoDB does not
-- compress rows by default); item_bytes keeps the uncompressed size.
CREATE TABLE IF NOT EXISTS archive (
	id                BIGINT          NOT NULL PRIMARY KEY,
	`key`             VARBINARY(255)  NOT NULL,
	key_parts         MEDIUMTEXT      NOT NULL,
	source            VARBINARY(1024) NOT NULL,
	title             MEDIUMTEXT      NOT NULL,
	url               MEDIUMTEXT      NOT NULL,
	item              LONGBLOB        NOT NULL,
	item_bytes        BIGINT          NOT NULL,
	content_hash      VARBINARY(255)  NOT NULL,
	crawled_at        BIGINT          NOT NULL,
	last_updated_at   BIGINT          NOT NULL,
	last_changed_at   BIGINT          NOT NULL,
	version           BIGINT          NOT NULL,
	event_at          BIGINT          NULL,
	date_errors       MEDIUMTEXT      NULL,
	processed_at      BIGINT          NULL,
	processed_version BIGINT          NOT NULL DEFAULT 0,
	processed_chain   VARBINARY(4096) NOT NULL DEFAULT '',
	derived           LONGBLOB        NULL,
	archived_at       BIGINT          NOT NULL,
	archive_reason    VARBINARY(32)   NOT NULL,
	UNIQUE KEY archive_key (`key`),
	KEY archive_crawled_at (crawled_at),
	KEY archive_last_updated_at (last_updated_at),
	KEY archive_event_at (event_at),
	KEY archive_source_last_updated_at (source, last_updated_at),
	KEY archive_archived_at (archived_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC;

-- History follows the record id, which is stable across active and
-- archive, so moving a record never moves its history.
CREATE TABLE IF NOT EXISTS history (
	record_id    BIGINT         NOT NULL,
	version      BIGINT         NOT NULL,
	item         LONGBLOB       NOT NULL,
	content_hash VARBINARY(255) NOT NULL,
	valid_from   BIGINT         NOT NULL,
	valid_to     BIGINT         NOT NULL,
	PRIMARY KEY (record_id, version)
) ENGINE=InnoDB;
