-- Small state next to the records: checkpoints, a journal of runs, leases
-- for processes sharing the store, and dead letters of the pipeline.

CREATE TABLE state (
	name  TEXT PRIMARY KEY,
	value BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE journal (
	seq  INTEGER PRIMARY KEY AUTOINCREMENT,
	kind TEXT    NOT NULL,
	at   INTEGER NOT NULL,
	body BLOB    NOT NULL
);
CREATE INDEX journal_kind_seq ON journal (kind, seq);

CREATE TABLE leases (
	name       TEXT PRIMARY KEY,
	owner      TEXT    NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE dead_letters (
	id        INTEGER PRIMARY KEY,
	version   INTEGER NOT NULL,
	processor TEXT    NOT NULL,
	error     TEXT    NOT NULL,
	failures  INTEGER NOT NULL,
	at        INTEGER NOT NULL
);

-- Freshness queries look for the oldest processed_at.
CREATE INDEX active_processed_at ON active (processed_at);
