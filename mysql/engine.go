package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// engine is MySQL's and MariaDB's sqlstore.Engine.
type engine struct {
	sqlstore.Defaults
	s *Store
}

func (e engine) Reader() sqlstore.Querier { return sqlstore.SQL(e.s.db) }

func (e engine) Writer() sqlstore.Querier { return sqlstore.SQL(e.s.db) }

// Write runs fn in a transaction (READ COMMITTED: see Open) and commits
// it, again when InnoDB rolled it back to break a deadlock.
func (e engine) Write(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.Wrap(what, sqlstore.Retry(ctx, sqlstore.Attempts, func(err error) bool { return isErr(err, errDeadlock) }, func() error {
		return sqlstore.InTx(ctx, e.s.db, nil, true, fn)
	}))
}

func (engine) Duplicate(err error) bool { return isErr(err, errDupEntry) }

// Upsert is REPLACE, the upsert MySQL and MariaDB spell the same way (see
// the package documentation).
func (engine) Upsert(table string, cols []string, nkey int) string {
	return "REPLACE INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + sqlstore.In(len(cols)) + ")"
}

func (engine) SearchArgs(r *crawlkeeper.Record) []any { return []any{encodeSearchText(r.SearchText)} }

// SearchRead decodes the stored search text (SearchArgs encodes it).
func (engine) SearchRead(v *sqlstore.SearchScan, r *crawlkeeper.Record) {
	if v.Text.Valid {
		r.SearchText = decodeSearchText(v.Text.String)
	}
}

// TitleMatch lower-cases both sides with LOWER(), which on MySQL and
// MariaDB folds non-ASCII letters too (the embedded store folds only
// ASCII): "É" finds "é" here. The escape is not a backslash, which MySQL
// string literals would read as an escape of their own.
func (engine) TitleMatch() (string, byte) { return `LOWER(title) LIKE LOWER(?) ESCAPE '!'`, '!' }

// DueFrom forces the rule's index: the optimizer would otherwise scan the
// primary key when a source filter looks selective.
func (engine) DueFrom(col string) string { return "active FORCE INDEX (active_" + col + ")" }

// DueAfter is the OR both servers turn into one index range; row value
// comparisons are not used for ranges by older MySQL.
func (engine) DueAfter(col string, at, id int64) (string, []any) {
	return "(" + col + " > ? OR (" + col + " = ? AND id > ?))", []any{at, at, id}
}

// View runs fn in a read-only REPEATABLE READ transaction: one snapshot
// (InnoDB's consistent read), and writers never wait for it.
func (e engine) View(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.Wrap(what, sqlstore.InTx(ctx, e.s.db, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, false, fn))
}

// maxChunk bounds one stored chunk of a log entry or snapshot part,
// whatever the server allows, so rows stay modest in memory.
const maxChunk = 8 << 20

// MonitorChunk is half a statement (binary values may double when
// escaped), at most maxChunk: a part of a large round never fails with
// "packet too large".
func (e engine) MonitorChunk() int { return min(max((e.s.maxStatement-4096)/2, 64<<10), maxChunk) }

// TableBytes is data_length + index_length of information_schema.TABLES
// after ANALYZE TABLE refreshed them (InnoDB counts allocated pages,
// off-page BLOB pages included); 0 for a table that does not exist, of
// which ANALYZE TABLE reports the error as a row.
func (e engine) TableBytes(ctx context.Context, table string) (int64, error) {
	rows, err := e.s.db.QueryContext(ctx, "ANALYZE TABLE `"+table+"`")
	if err != nil {
		return 0, err
	}
	rows.Close()
	var n sql.NullInt64
	err = e.s.db.QueryRowContext(ctx, `SELECT sum(data_length + index_length) FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = ?`, table).Scan(&n)
	return n.Int64, err
}

// MonitorDictBlock keeps a dictionary block under half a 16 KB page, so
// InnoDB stores it in the row (two to a page) rather than on BLOB pages
// of its own, which take a whole page each.
func (engine) MonitorDictBlock() int { return 7600 }
