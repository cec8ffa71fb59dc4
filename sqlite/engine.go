package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// engine is SQLite's sqlstore.Engine.
type engine struct {
	sqlstore.Defaults
	s *Store
}

// Reader reads through statements prepared once on the reader pool
// (readStmt): the store's reads are a few shapes run again and again.
func (e engine) Reader() sqlstore.Querier { return readQuerier{e.s} }

// Writer runs a statement on the writer connection; it waits for a write
// transaction in progress.
func (e engine) Writer() sqlstore.Querier { return sqlstore.SQL(e.s.w) }

// Write runs fn in a BEGIN IMMEDIATE transaction on the writer connection,
// with statements borrowed from the writer's cache, and commits it through
// commitWrite (which brings the full-text index up to date first). SQLite
// never aborts a transaction that holds the write lock, so fn runs once.
func (e engine) Write(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	tx, err := e.s.beginWrite(ctx)
	if err != nil {
		return e.Wrap(what+": begin", err)
	}
	defer tx.Rollback()
	w := &writer{Querier: sqlstore.SQL(tx), ctx: ctx, s: e.s, tx: tx, stmts: map[string]*sql.Stmt{}}
	defer w.close()
	if err := fn(w); err != nil {
		return e.Wrap(what, err)
	}
	w.close()
	return e.Wrap(what+": commit", e.s.commitWrite(ctx, tx))
}

func (engine) Wrap(what string, err error) error {
	if known, ok := sqlstore.Known(err); ok || err == nil {
		return known
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (engine) Duplicate(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// ForUpdate is empty: a write transaction is SQLite's only writer.
func (engine) ForUpdate() string { return "" }

// readQuerier runs reads on the reader pool through cached statements.
type readQuerier struct{ s *Store }

func (q readQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return sqlstore.SQL(q.s.r).Exec(ctx, query, args...)
}

func (q readQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	st, err := q.s.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqlstore.SQLRows{Rows: rows}, nil
}

func (q readQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st, err := q.s.readStmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// errRow is a Row whose query could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// TitleMatch uses LIKE, which SQLite compares without regard to the case
// of ASCII letters.
func (engine) TitleMatch() (string, byte) { return `title LIKE ? ESCAPE '\'`, '\\' }

// DueFrom names the rule's index: SQLite's planner would otherwise read
// the table in id order when a source filter looks selective. DueAfter is
// the default row value, which keeps the plan a single range on the index;
// the equivalent OR would make SQLite merge two ranges and sort.
func (engine) DueFrom(col string) string { return "active INDEXED BY active_" + col }

// ReadDue returns the page as one text value: with the pure-Go driver
// each row and column returned costs more than SQLite's own work per index
// entry, so packing the page in SQL makes selection several times faster.
// SQL does not promise that an aggregate sees a subquery's rows in its
// order, so each row carries its rule column and parseDue puts the page in
// (column, id) order; an ORDER BY inside group_concat would say the same
// but make SQLite sort the page again (a third of the query's time on a
// page of 10,000).
func (e engine) ReadDue(ctx context.Context, query string, args []any) ([]crawlkeeper.DueRecord, error) {
	var packed string
	err := e.Reader().QueryRow(ctx, `SELECT coalesce(group_concat(id || ',' || version || ',' || last_updated_at || ',' || due_at, ';'), '') FROM (`+query+`)`, args...).Scan(&packed)
	if err != nil {
		return nil, err
	}
	return parseDue(packed)
}

// parseDue reads the rows packed by ReadDue, "id,version,updated,at;...",
// and returns them in (at, id) order, each with its At.
func parseDue(packed string) ([]crawlkeeper.DueRecord, error) {
	out := make([]crawlkeeper.DueRecord, 0, strings.Count(packed, ";")+1)
	for packed != "" {
		var row string
		row, packed, _ = strings.Cut(packed, ";")
		var f [4]int64
		for k := range f {
			var field string
			field, row, _ = strings.Cut(row, ",")
			n, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("select due: bad row value %q", field)
			}
			f[k] = n
		}
		out = append(out, crawlkeeper.DueRecord{ID: f[0], Version: f[1], LastUpdatedAt: crawlkeeper.MicrosTime(f[2]), At: crawlkeeper.MicrosTime(f[3])})
	}
	byCursor := func(a, b crawlkeeper.DueRecord) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID))
	}
	// Usually already in order: checking is one pass.
	if !slices.IsSortedFunc(out, byCursor) {
		slices.SortFunc(out, byCursor)
	}
	return out, nil
}

func (engine) ReleaseKeys(context.Context, sqlstore.Querier, []string) error { return nil }

func (engine) Greatest() string { return "max" }

// View runs fn in a read transaction on a reader connection: WAL gives it
// one snapshot.
func (e engine) View(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.Wrap(what, sqlstore.InTx(ctx, e.s.r, nil, false, fn))
}

// MonitorName is text: the monitor's name columns are TEXT.
func (engine) MonitorName(name string) any { return name }

// TableBytes sums the pages of the table's b-tree and of its indexes
// (SQLite's dbstat virtual table).
func (e engine) TableBytes(ctx context.Context, table string) (int64, error) {
	var n sql.NullInt64
	err := e.s.r.QueryRowContext(ctx, `SELECT sum(pgsize) FROM dbstat WHERE name = ?1
		OR name IN (SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1)`, table).Scan(&n)
	return n.Int64, err
}

// MonitorDictBlock keeps a dictionary block within one 4 KB page (a
// cell's local payload is at most 4,061 bytes), so none spills into
// overflow pages.
func (engine) MonitorDictBlock() int { return 4000 }
