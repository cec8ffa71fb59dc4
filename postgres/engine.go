package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// engine is PostgreSQL's sqlstore.Engine.
type engine struct {
	sqlstore.Defaults
	s *Store
}

func (e engine) Reader() sqlstore.Querier { return pgQuerier{e.s.pool} }

func (e engine) Writer() sqlstore.Querier { return pgQuerier{e.s.pool} }

// Write runs fn in a READ COMMITTED transaction and commits it, again when
// PostgreSQL aborted it to break a deadlock or a serialization conflict.
func (e engine) Write(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.Wrap(what, sqlstore.Retry(ctx, sqlstore.Attempts, retryable, func() error {
		return pgx.BeginTxFunc(ctx, e.s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error { return fn(pgQuerier{tx}) })
	}))
}

func (engine) Duplicate(err error) bool { return code(err) == "23505" }

// pgRunner is what a pgx pool and a pgx transaction have in common.
type pgRunner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgQuerier adapts pgx to sqlstore.Querier. It rewrites the shared
// statements' ? placeholders as $1, $2, ... and `quoted` identifiers as
// "quoted" ones (rebind), stores text arguments with the NUL escape of
// enc (string and []string values; JSON text goes as sqlstore.JSONText,
// which is never escaped), and reverses it on every string scanned.
type pgQuerier struct{ r pgRunner }

func (q pgQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.r.Exec(ctx, rebind(query), encArgs(args)...)
	return tag.RowsAffected(), err
}

func (q pgQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.r.Query(ctx, rebind(query), encArgs(args)...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

func (q pgQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgRow{q.r.QueryRow(ctx, rebind(query), encArgs(args)...)}
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Scan(dest ...any) error { return decDest(dest, r.Rows.Scan(dest...)) }

type pgRow struct{ pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return decDest(dest, err)
}

// encArgs applies enc to text arguments, in a copy: a transaction run
// again passes the same arguments again.
func encArgs(args []any) []any {
	var out []any
	for i, a := range args {
		var v any
		switch x := a.(type) {
		case string:
			if e := enc(x); e != x {
				v = e
			}
		case []string:
			v = sqlstore.Map(x, enc)
		}
		if v != nil {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = v
		}
	}
	if out == nil {
		return args
	}
	return out
}

// decDest applies dec to the strings a row was scanned into, unless the
// scan failed with err, and returns err.
func decDest(dest []any, err error) error {
	if err != nil {
		return err
	}
	for _, d := range dest {
		if p, ok := d.(*string); ok {
			*p = dec(*p)
		}
	}
	return nil
}

// rebound caches rebind's results: the store runs a few hundred statement
// texts over and over. Statements with values written into their text
// (freshness) would grow it without end, so it starts again when full.
var rebound struct {
	sync.Mutex
	m map[string]string
}

// rebind turns a statement written for the shared store (? placeholders,
// `quoted` identifiers) into PostgreSQL's form. Text inside single quotes
// is left alone. A statement without either is returned as it is, so
// statements written for PostgreSQL pass through.
func rebind(q string) string {
	if !strings.ContainsAny(q, "?`") {
		return q
	}
	rebound.Lock()
	v, ok := rebound.m[q]
	rebound.Unlock()
	if ok {
		return v
	}
	var b strings.Builder
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			quoted = !quoted
			b.WriteByte(c)
		case quoted:
			b.WriteByte(c)
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		case c == '`':
			b.WriteByte('"')
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	rebound.Lock()
	if len(rebound.m) >= 4096 || rebound.m == nil {
		rebound.m = map[string]string{}
	}
	rebound.m[q] = out
	rebound.Unlock()
	return out
}

// SearchCols are the search text and the text search configuration it is
// indexed with (see search.go).
func (engine) SearchCols() string { return "search_text, search_config" }

// SearchArgs are the search text, never NULL once a record is written by
// a version that knows search, and its configuration.
func (engine) SearchArgs(r *crawlkeeper.Record) []any {
	text := r.SearchText
	return []any{&text, searchConfig(r.SearchLanguage)}
}

// SearchDest scans the search text and its configuration.
func (engine) SearchDest(dest []any, v *sqlstore.SearchScan) []any {
	return append(dest, &v.Text, &v.Language)
}

// SearchRead takes the search text and its configuration.
func (e engine) SearchRead(v *sqlstore.SearchScan, r *crawlkeeper.Record) {
	e.Defaults.SearchRead(v, r)
	r.SearchLanguage = v.Language
}

// CompressArchive is false: PostgreSQL compresses large values itself
// (see move.go).
func (engine) CompressArchive() bool { return false }

// TitleMatch lower-cases the ASCII letters of the title and nothing else,
// the case folding of the embedded store's LIKE.
func (engine) TitleMatch() (string, byte) {
	return `translate(title, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') LIKE ? ESCAPE '\'`, '\\'
}

func (engine) SumInt(expr string) string { return "coalesce(sum(" + expr + "), 0)::bigint" }

func (engine) StoredBytes(col string) string { return "pg_column_size(" + col + ")" }

// Move archives in one statement inside PostgreSQL (see move.go).
func (e engine) Move(ctx context.Context, tx sqlstore.Querier, moves []crawlkeeper.Move, at time.Time, errs crawlkeeper.DateErrorCounts) ([]int64, error) {
	return move(ctx, tx.(pgQuerier).r.(pgx.Tx), rebind(e.s.RecordCols()), moves, at.UnixMicro(), errs)
}

// NextIDQuery reads what the sequence hands out next without taking it.
func (engine) NextIDQuery() string {
	return `SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM record_ids`
}

// View runs fn in a read-only REPEATABLE READ transaction: one snapshot,
// and writers never wait for it.
func (e engine) View(ctx context.Context, what string, fn func(tx sqlstore.Querier) error) error {
	return e.Wrap(what, pgx.BeginTxFunc(ctx, e.s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return fn(pgQuerier{tx})
	}))
}

// TableBytes is pg_total_relation_size: the heap, its TOAST table and
// every index.
func (e engine) TableBytes(ctx context.Context, table string) (int64, error) {
	var n sql.NullInt64
	err := e.s.pool.QueryRow(ctx, `SELECT pg_total_relation_size(to_regclass($1))`, table).Scan(&n)
	return n.Int64, err
}

// MonitorDictBlock keeps a dictionary block under the TOAST threshold
// (2,032 bytes a row), four rows to an 8 KB page: larger values would be
// compressed and moved to the TOAST table in chunks of their own.
func (engine) MonitorDictBlock() int { return 1990 }
