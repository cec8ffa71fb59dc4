package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// Querier runs statements on a connection pool or inside a transaction. It
// is the one executor the shared store code is written against; each
// engine adapts its driver to it: database/sql for SQLite and MySQL (SQL,
// below), pgx for PostgreSQL (package postgres).
//
// Statements are written with ? placeholders and identifiers quoted with
// backticks where they are reserved words (`key`), the way SQLite and MySQL
// read them; an engine whose driver reads other forms rewrites them in its
// adapter.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a query; the caller closes the rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query expected to return at most one row; Scan of a
	// query that returned none fails with ErrNoRows.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows is a result set. Close may be called more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// ErrNoRows is what Row.Scan returns when the query returned no row, on
// every engine.
var ErrNoRows = sql.ErrNoRows

// NoRows reports whether err says a query returned no row.
func NoRows(err error) bool { return errors.Is(err, ErrNoRows) }

// SQLRunner is what database/sql's *sql.DB, *sql.Tx and *sql.Conn have in
// common.
type SQLRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SQL adapts a database/sql pool, transaction or connection.
func SQL(r SQLRunner) Querier { return sqlQuerier{r} }

type sqlQuerier struct{ r SQLRunner }

func (q sqlQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.r.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return SQLRows{rows}, nil
}

func (q sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) Row {
	return q.r.QueryRowContext(ctx, query, args...)
}

// InTx runs fn in a transaction of db begun with opts. It commits when fn
// succeeds and commit is set, and rolls back otherwise (a read's snapshot
// has nothing to commit).
func InTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, commit bool, fn func(tx Querier) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(SQL(tx)); err != nil || !commit {
		return err
	}
	return tx.Commit()
}

// SQLRows adapts database/sql's rows.
type SQLRows struct{ *sql.Rows }

// Close closes the rows; its error, if any, is the one Err reports.
func (r SQLRows) Close() { r.Rows.Close() }

// Collect reads every row of a one-column query into a slice.
func Collect[T any](rows Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// EachRow runs a query and fn on every row it returns.
func EachRow(ctx context.Context, q Querier, fn func(Rows) error, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	return Each(rows, err, fn)
}

// Each runs fn on every row of rows and closes them.
func Each(rows Rows, err error, fn func(Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
