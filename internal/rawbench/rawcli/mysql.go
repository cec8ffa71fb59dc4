//go:build mysql

package main

import (
	"context"
	"database/sql"
	"net/url"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	driver "github.com/go-sql-driver/mysql"
)

func init() {
	engine.count = func(ctx context.Context, u string) (int64, error) {
		db, err := openMySQL(u)
		if err != nil {
			return 0, err
		}
		defer db.Close()
		var n int64
		return n, db.QueryRowContext(ctx, rawsql.Count).Scan(&n)
	}
	engine.search = func(ctx context.Context, u string, q rawsql.Query) ([]hit, error) {
		db, err := openMySQL(u)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		s, args := rawsql.MySQLSearch(q)
		return scanHits(db.QueryContext(ctx, s, args...))
	}
	engine.archive = func(ctx context.Context, u string, cutoff, now int64, dry bool) (int, error) {
		db, err := openMySQL(u)
		if err != nil {
			return 0, err
		}
		defer db.Close()
		return sqlArchive(ctx, db, rawsql.MySQLCols, cutoff, now, dry)
	}
	engine.next = func(ctx context.Context, u string, a nextArgs) error {
		db, err := openMySQL(u)
		if err != nil {
			return err
		}
		defer db.Close()
		return sqlNext(ctx, db, nextSQL, readRows, a)
	}
}

// openMySQL connects to the database of a mysql://user:password@host:port/db URL.
func openMySQL(raw string) (*sql.DB, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	cfg := driver.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr += ":3306"
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.InterpolateParams = true
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}
