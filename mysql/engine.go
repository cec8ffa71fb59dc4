package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// engine is MySQL's and MariaDB's sqlstore.Engine.
type engine struct{ s *Store }

var _ sqlstore.Engine = engine{}

func (e engine) Name() string {
	if e.s.mariaDB {
		return "MariaDB"
	}
	return "MySQL"
}

func (e engine) Reader() sqlstore.Querier { return sqlstore.SQL(e.s.db) }

func (e engine) Writer() sqlstore.Querier { return sqlstore.SQL(e.s.db) }

// Write runs fn in a READ COMMITTED transaction, again when InnoDB rolled
// it back to break a deadlock (inTx).
func (e engine) Write(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.s.inTx(ctx, what, func(tx *sql.Tx) error { return fn(mysqlTx{sqlstore.SQL(tx), tx}) })
}

func (e engine) Wrap(what string, err error) error { return e.s.wrap(what, err) }

func (engine) Duplicate(err error) bool { return isErr(err, errDupEntry) }

// Upsert is REPLACE, the upsert MySQL and MariaDB spell the same way
// (VALUES() in ON DUPLICATE KEY UPDATE is deprecated in MySQL 8 and its
// row alias is MySQL's alone).
func (engine) Upsert(table string, cols []string, nkey int) string {
	return "REPLACE INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + sqlstore.In(len(cols)) + ")"
}

func (engine) ForUpdate() string { return " FOR UPDATE" }

func (engine) SearchCols() string { return "search_text" }

func (engine) SearchArgs(r *crawlkeeper.Record) []any { return []any{encodeSearchText(r.SearchText)} }

func (engine) SearchDest(r *crawlkeeper.Record) ([]any, func()) {
	var text *string
	return []any{&text}, func() {
		if text != nil {
			r.SearchText = decodeSearchText(*text)
		}
	}
}

func (engine) CompressArchive() bool { return true }

// TitleMatch lower-cases both sides with LOWER(), which on MySQL and
// MariaDB folds non-ASCII letters too (the embedded store folds only
// ASCII): "É" finds "é" here. The escape is not a backslash, which MySQL
// string literals would read as an escape of their own.
func (engine) TitleMatch() (string, byte) { return `LOWER(title) LIKE LOWER(?) ESCAPE '!'`, '!' }

func (engine) SumInt(expr string) string { return "coalesce(sum(" + expr + "), 0)" }

func (engine) StoredBytes(col string) string { return "length(" + col + ")" }
