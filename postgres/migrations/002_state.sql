-- Small state next to the records: checkpoints, a journal of runs, leases
-- for processes sharing the store, and dead letters of the pipeline.

CREATE TABLE state (
	name  text  PRIMARY KEY,
	value bytea NOT NULL
);

CREATE TABLE journal (
	seq  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind text   NOT NULL,
	at   bigint NOT NULL,
	body bytea  NOT NULL
);
CREATE INDEX journal_kind_seq ON journal (kind, seq);

CREATE TABLE leases (
	name       text   PRIMARY KEY,
	owner      text   NOT NULL,
	expires_at bigint NOT NULL
);

CREATE TABLE dead_letters (
	id        bigint  PRIMARY KEY,
	version   bigint  NOT NULL,
	processor text    NOT NULL,
	error     bytea   NOT NULL, -- messages of external programs need not be UTF-8
	failures  integer NOT NULL,
	at        bigint  NOT NULL
);

-- Freshness queries look for the oldest processed_at.
CREATE INDEX active_processed_at ON active (processed_at);
