-- Small state next to the records: checkpoints, a journal of runs, leases
-- for processes sharing the store, and dead letters of the pipeline.

CREATE TABLE IF NOT EXISTS state (
	name  VARBINARY(1024) NOT NULL PRIMARY KEY,
	value LONGBLOB        NOT NULL
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS journal (
	seq  BIGINT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
	kind VARBINARY(1024) NOT NULL,
	at   BIGINT          NOT NULL,
	body LONGBLOB        NOT NULL,
	KEY journal_kind_seq (kind, seq)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS leases (
	name       VARBINARY(1024) NOT NULL PRIMARY KEY,
	owner      VARBINARY(1024) NOT NULL,
	expires_at BIGINT          NOT NULL
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS dead_letters (
	id        BIGINT          NOT NULL PRIMARY KEY,
	version   BIGINT          NOT NULL,
	processor VARBINARY(1024) NOT NULL,
	error     MEDIUMBLOB      NOT NULL,
	failures  INT             NOT NULL,
	at        BIGINT          NOT NULL
) ENGINE=InnoDB;
