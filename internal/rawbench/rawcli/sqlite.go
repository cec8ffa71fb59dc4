//go:build sqlite

package main

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"

	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	_ "modernc.org/sqlite"
)

func init() {
	engine.count = func(ctx context.Context, u string) (int64, error) {
		db, err := openSQLite(u)
		if err != nil {
			return 0, err
		}
		defer db.Close()
		var n int64
		return n, db.QueryRowContext(ctx, rawsql.Count).Scan(&n)
	}
	engine.search = func(ctx context.Context, u string, q rawsql.Query) ([]hit, error) {
		db, err := openSQLite(u)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		s, args := rawsql.SQLiteSearch(q)
		return scanHits(db.QueryContext(ctx, s, args...))
	}
	engine.archive = func(ctx context.Context, u string, cutoff, now int64, dry bool) (int, error) {
		db, err := openSQLite(u)
		if err != nil {
			return 0, err
		}
		defer db.Close()
		return sqlArchive(ctx, db, rawsql.SQLiteCols, cutoff, now, dry)
	}
	engine.next = func(ctx context.Context, u string, a nextArgs) error {
		db, err := openSQLite(u)
		if err != nil {
			return err
		}
		defer db.Close()
		return sqlNext(ctx, db, nextSQLitePacked, readPacked, a)
	}
}

// openSQLite opens the file of a sqlite:///path URL.
func openSQLite(raw string) (*sql.DB, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	path := u.Path
	switch {
	case u.Opaque != "":
		path = u.Opaque
	case u.Host != "":
		path = filepath.Join(u.Host, u.Path)
	}
	return sql.Open("sqlite", path)
}
